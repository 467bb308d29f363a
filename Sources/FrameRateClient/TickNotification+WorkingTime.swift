public import FrameRateProtocol

extension TickNotification {
    /// Seconds left to finish this tick's frame: `targetTimestamp - now`, both on
    /// `CLOCK_MONOTONIC`; negative once the deadline has passed.
    /// - Parameter now: the current time, seconds on `CLOCK_MONOTONIC`
    ///   (defaults to `MonotonicClock.now.seconds`).
    public func workingTimeLeft(now: Double = MonotonicClock.now.seconds) -> Double {
        targetTimestamp - now
    }
}

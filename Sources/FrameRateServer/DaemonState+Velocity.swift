import FrameRateModel
import FrameRateProtocol

extension DaemonState {
    /// Records a `contentVelocity` from `DisplayLink/FrameDone` or `/Present` (validated by
    /// the protocol: finite, `>= 0`), if the request carried one.
    /// - Returns: whether the display re-arbitrated its panel (the caller then wakes the
    ///   tick plane: a panel change may be due before it next wakes).
    mutating func reportContentVelocity(
        _ velocity: Double?, link: LinkID, owner: OwnerID, at now: MonotonicClock.Instant
    ) throws(CompositorError) -> Bool {
        guard let velocity else { return false }
        return try compositor.reportContentVelocity(link: link, owner: owner, velocity: velocity, at: now)
    }
}

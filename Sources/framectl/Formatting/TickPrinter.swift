import FrameRateProtocol

/// Formats successive ticks of one link, remembering the previous timestamp
/// for the measured rate.
struct TickPrinter: Sendable {
    /// Whether to print compact JSON instead of text.
    let json: Bool
    /// The previous tick's `timestamp`, seconds on `CLOCK_MONOTONIC`.
    private(set) var previousTimestamp: Double?

    /// A printer for text (`json == false`) or JSON lines.
    init(json: Bool) {
        self.json = json
    }

    /// The line for `tick`, received at `now` (seconds on `CLOCK_MONOTONIC`).
    mutating func line(for tick: TickNotification, now: Double) -> String {
        defer { previousTimestamp = tick.timestamp }
        return json ? TickText.json(tick, now: now) : TickText.human(tick, previousTimestamp: previousTimestamp, now: now)
    }
}

/// A transient boost of one display link (`framerate.v1.DisplayLink/Boost`): while it
/// lasts the link votes ``range`` instead of its own range.
///
/// Rules (see `docs/arbitration.md`, "Transient boosts"):
/// - A boost lasts until ``end``; each further boost moves the end to `now + duration`
///   only if that is later: a boost never shortens an earlier one.
/// - The latest boost's range is the one voted.
/// - It ends exactly at ``end``: the display re-arbitrates at that instant (at the last
///   end, for boosts ending before the same vsync) and a lower rate then takes the
///   normal decrease dwell.
///
/// Times are durations since the display's origin (its first vsync), like ``LinkPacer``'s.
public struct LinkBoost: Hashable, Sendable {
    /// The longest one boost may last, in seconds (`duration <= 5`).
    public static let maximumDuration: Duration = .seconds(5)

    /// The range the link votes while boosted, in Hz.
    public let range: FrameRateRange
    /// When the boost ends, as the time since the display's origin.
    public let end: Duration

    /// A boost from `now` (since the display's origin) for `duration`.
    init(range: FrameRateRange, now: Duration, duration: Duration) {
        self.range = range
        self.end = now + duration
    }

    private init(range: FrameRateRange, end: Duration) {
        self.range = range
        self.end = end
    }

    /// This boost extended by a new one at `now` for `duration` with `range`: the new
    /// range, and the later of the two ends.
    func extended(range: FrameRateRange, now: Duration, duration: Duration) -> LinkBoost {
        LinkBoost(range: range, end: Swift.max(end, now + duration))
    }

    /// Whether the boost has ended at `time` (since the display's origin): it holds
    /// during `[start, end)`.
    func hasEnded(at time: Duration) -> Bool { time >= end }

    /// The default boost range of a link with `range`: its maximum as minimum, maximum
    /// and preferred rate (`{max, max, max}`).
    public static func defaultRange(for range: FrameRateRange) -> FrameRateRange {
        FrameRateRange(uncheckedMinimum: range.maximum, maximum: range.maximum, preferred: range.maximum)
    }
}

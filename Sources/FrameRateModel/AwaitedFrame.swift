/// A frame the daemon waits for before it ticks a link again.
///
/// Once a link's client reports finished frames (`FrameDone` or `Present`), an interval
/// that begins while the latest delivered tick's frame is unfinished is skipped, never
/// queued (``LinkPacer``). A client that stops answering, or answers only some ticks, then
/// gets no ticks at all. This says so: the link awaits the frame of tick ``sequence``,
/// and ``skippedIntervals`` of its intervals have passed without a tick meanwhile.
public struct AwaitedFrame: Hashable, Sendable {
    /// The sequence of the delivered tick whose frame is unfinished.
    public let sequence: UInt64
    /// That tick's `timestamp` (its vsync), as the time since ``Compositor/start``.
    public let tickTime: Duration
    /// The link's intervals that passed without a tick since that one: at least 1.
    public let skippedIntervals: UInt64

    /// Builds one.
    public init(sequence: UInt64, tickTime: Duration, skippedIntervals: UInt64) {
        self.sequence = sequence
        self.tickTime = tickTime
        self.skippedIntervals = skippedIntervals
    }
}

/// A link's pacing at a handover: everything ``LinkPacer`` counts, so that a daemon that
/// takes over keeps the link's sequence numbers and reports the handover's gap as skipped
/// intervals of the next tick.
///
/// Times are durations since the compositor's start (its displays' first vsync).
public struct LinkPacingCheckpoint: Hashable, Sendable {
    /// The sequence number of the link's latest interval, delivered or skipped.
    public var sequence: UInt64
    /// Intervals skipped since the last delivered tick.
    public var pendingSkips: UInt64
    /// The sequence of the latest delivered tick.
    public var lastDelivered: UInt64
    /// The latest sequence the client reported finished.
    public var lastFinished: UInt64
    /// Whether the client paces itself with frame-done reports.
    public var reportsFrameDone: Bool
    /// The earliest time of the next tick (the previous tick's target), since the start; `nil` before the first tick.
    public var nextTarget: Duration?
    /// When the latest delivered tick's interval started, since the start; `nil` from a
    /// daemon that did not record it.
    public var lastDeliveredTime: Duration?
    /// The latest delivered tick's interval; `nil` from a daemon that did not record it.
    public var lastDeliveredInterval: Duration?
    /// Whether the current wait for the latest tick's frame was already reported (logged).
    public var heldBackReported: Bool

    /// Builds a pacing checkpoint; the delivery times and the report flag default to
    /// what a daemon that did not record them hands over.
    public init(
        sequence: UInt64, pendingSkips: UInt64, lastDelivered: UInt64, lastFinished: UInt64, reportsFrameDone: Bool,
        nextTarget: Duration?, lastDeliveredTime: Duration? = nil, lastDeliveredInterval: Duration? = nil, heldBackReported: Bool = false
    ) {
        self.sequence = sequence
        self.pendingSkips = pendingSkips
        self.lastDelivered = lastDelivered
        self.lastFinished = lastFinished
        self.reportsFrameDone = reportsFrameDone
        self.nextTarget = nextTarget
        self.lastDeliveredTime = lastDeliveredTime
        self.lastDeliveredInterval = lastDeliveredInterval
        self.heldBackReported = heldBackReported
    }

    /// Whether the counters are consistent: nothing delivered or finished beyond the latest interval.
    var isConsistent: Bool {
        lastDelivered <= sequence && lastFinished <= lastDelivered && pendingSkips <= sequence
    }
}

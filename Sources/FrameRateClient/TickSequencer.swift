/// Turns one link's ticks from the daemon into the ticks the application sees,
/// across re-registrations after a reconnect: a pure state machine, stepped by
/// the link's record (no clock, no I/O).
///
/// Within one registration on one daemon the mapping is a constant offset:
/// `application sequence = applicationBase + (daemon sequence − daemonBase)`,
/// and `skipped` is the daemon's. Before the first reconnect both bases are 0,
/// so the application sees the daemon's numbers unchanged.
///
/// After a re-registration (a new daemon numbers the link's intervals from 1
/// again), the first tick delivered on it closes the gap:
///
/// - if the link was running: `skipped = max(1, round((t − t₀) · callbackRate) − 1)`,
///   where `t` is that tick's `timestamp`, `t₀` the `timestamp` of the last tick
///   delivered to the application, `callbackRate` that new tick's, and `round`
///   rounds half away from zero (C `round()`; `math.floor(x + 0.5)` in Python, not
///   `round()`). It is at least 1: the application always sees the outage as one gap;
/// - if the link was paused when it was re-registered (or was paused before its
///   first new tick): `skipped = 0`, as for any resume ("a resumed link starts
///   afresh: the paused time is not reported as skipped", arbitration.md);
///
/// and its application sequence is `last application sequence + skipped + 1`, so
/// `sequence == previous.sequence + skipped + 1` keeps holding for the
/// application. The daemon's own `skipped` on that first tick is not added: the
/// time gap already counts every interval since the last delivered tick.
///
/// A link that never delivered a tick has no gap to report; its numbers stay the
/// new daemon's.
struct TickSequencer: Hashable, Sendable {
    /// What the next delivered tick must account for.
    enum Gap: Hashable, Sendable {
        /// Nothing: the offset applies.
        case none
        /// The link was re-registered while running: report the time gap.
        case reconnected
        /// The link was re-registered paused, or paused since: report no skip.
        case resumed
    }

    /// The last tick delivered to the application, in its numbering.
    struct Delivered: Hashable, Sendable {
        /// The application's sequence.
        var sequence: UInt64
        /// The tick's `timestamp`, seconds on `CLOCK_MONOTONIC`.
        var timestamp: Double
    }

    /// The application's view of a tick: its sequence and skip count.
    struct Mapped: Hashable, Sendable {
        var sequence: UInt64
        var skipped: UInt64
    }

    private(set) var lastDelivered: Delivered?
    private(set) var applicationBase: UInt64 = 0
    private(set) var daemonBase: UInt64 = 0
    private(set) var gap: Gap = .none

    /// The intervals of a link at `callbackRate` Hz that passed without a tick
    /// between ticks at `previous` and `next` (seconds):
    /// `max(1, round((next − previous) · callbackRate) − 1)`, rounding half away from zero.
    static func skippedIntervals(previous: Double, next: Double, callbackRate: Double) -> UInt64 {
        let intervals = ((next - previous) * callbackRate).rounded(.toNearestOrAwayFromZero)
        guard intervals.isFinite, intervals - 1 > 1 else { return 1 }
        // Beyond 2^53 a double no longer holds every integer; no outage is that long.
        return UInt64(min(intervals - 1, 9_007_199_254_740_992))
    }

    /// The link is being registered again (on a new connection); `paused` is
    /// whether it is registered paused. The next delivered tick closes the gap.
    mutating func reregistering(paused: Bool) {
        if gap != .resumed { gap = paused ? .resumed : .reconnected }
    }

    /// The application paused the link. A pause before the first tick of a new
    /// registration turns its gap into a resume (no skip reported).
    mutating func paused() {
        if gap == .reconnected { gap = .resumed }
    }

    /// The application's numbers for a tick from the daemon, recording it as delivered.
    mutating func map(sequence: UInt64, timestamp: Double, callbackRate: Double, skipped: UInt64) -> Mapped {
        let mapped: Mapped
        switch (gap, lastDelivered) {
        case (.none, _), (_, nil):
            let sequence = sequence >= daemonBase ? applicationBase &+ (sequence - daemonBase) : applicationBase
            mapped = Mapped(sequence: sequence, skipped: skipped)
        case (.reconnected, let last?):
            let skipped = Self.skippedIntervals(previous: last.timestamp, next: timestamp, callbackRate: callbackRate)
            mapped = Mapped(sequence: last.sequence &+ skipped &+ 1, skipped: skipped)
        case (.resumed, let last?):
            mapped = Mapped(sequence: last.sequence &+ 1, skipped: 0)
        }
        if gap != .none {
            gap = .none
            applicationBase = mapped.sequence
            daemonBase = sequence
        }
        lastDelivered = Delivered(sequence: mapped.sequence, timestamp: timestamp)
        return mapped
    }

    /// The daemon's sequence for the application's `sequence` (for FrameDone):
    /// the same offset backwards. A sequence from before the current
    /// registration, or any while its first tick is still awaited, maps to 0,
    /// which the daemon accepts (it only turns on overrun pacing).
    func daemonSequence(forApplicationSequence sequence: UInt64) -> UInt64 {
        guard gap == .none, sequence >= applicationBase else { return 0 }
        return daemonBase &+ (sequence - applicationBase)
    }
}

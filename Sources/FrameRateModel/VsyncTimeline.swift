/// A display's vsync grid: vsync instants `anchor + k * period`, where the
/// anchor moves to the vsync at which the period last changed.
///
/// The timeline never jumps backwards and never repeats a vsync: a period change
/// takes effect at a vsync that already lies on the old grid, and the new grid
/// starts there. Instants are those of the injected clock.
public struct VsyncTimeline<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// A vsync: its instant and its index since the timeline started.
    public struct Vsync: Hashable, Sendable {
        /// Counts vsyncs since the timeline started, across period changes.
        public let index: UInt64
        /// When the vsync happens.
        public let instant: Instant
    }

    /// The vsync at which the current period started.
    public private(set) var anchor: Vsync
    /// Time between vsyncs (`1 / refresh rate`).
    public private(set) var period: Duration
    /// The last vsync handed out by ``advance(to:)``.
    public private(set) var last: Vsync

    /// A timeline whose first vsync is at `start`, refreshing at `rate` Hz.
    public init(start: Instant, rate: Double) {
        let first = Vsync(index: 0, instant: start)
        self.anchor = first
        self.last = first
        self.period = Self.period(of: rate)
    }

    /// A timeline restored at a handover: the current period started at vsync `anchor`,
    /// and `lastIndex` (at or after the anchor's index) is the last vsync handed out.
    init(anchor: Vsync, rate: Double, lastIndex: UInt64) {
        self.anchor = anchor
        self.period = Self.period(of: rate)
        self.last = anchor
        self.last = vsync(index: Swift.max(lastIndex, anchor.index))
    }

    /// `1 / rate` as a duration (attosecond resolution, so `n` periods at
    /// 120 Hz stay within a femtosecond of `n / 120` s).
    ///
    /// `rate` is a display's refresh rate, which a ``DisplayProfile`` keeps inside
    /// ``FrameRateRange/acceptedRates``; it is clamped there all the same, because
    /// `Duration.seconds(_: Double)` traps on infinities and NaN.
    public static func period(of rate: Double) -> Duration {
        let accepted = FrameRateRange.acceptedRates
        return .seconds(1 / Swift.min(Swift.max(rate.isNaN ? accepted.upperBound : rate, accepted.lowerBound), accepted.upperBound))
    }

    /// The vsync after the last one handed out: when to wake up next.
    public var next: Vsync { vsync(index: last.index + 1) }

    /// The vsync with `index` on the current grid (`index` at or after the anchor's).
    public func vsync(index: UInt64) -> Vsync {
        // `index >= anchor.index` always, and the difference counts vsyncs since the last rate
        // change: below 2^63 for 292 million years at 1000 Hz, so `Int(clamping:)` never clamps.
        Vsync(index: index, instant: anchor.instant.advanced(by: FrameRateMath.times(period, Int(clamping: index - anchor.index))))
    }

    /// The first vsync of the current grid at or after `instant`, and not before ``next``.
    public func firstVsync(atOrAfter instant: Instant) -> Vsync {
        let elapsed = anchor.instant.duration(to: instant)
        guard elapsed > .zero else { return next }
        let periods = (elapsed / period).rounded(.up)
        // Far beyond any real deadline (more vsyncs than an Int holds): never.
        guard periods < Double(Int.max / 2) else { return vsync(index: UInt64.max / 2) }
        var candidate = vsync(index: anchor.index + UInt64(periods))
        // Division rounding: step back if the previous vsync is already at or after `instant`.
        if candidate.index > anchor.index, vsync(index: candidate.index - 1).instant >= instant {
            candidate = vsync(index: candidate.index - 1)
        }
        return candidate.index < next.index ? next : candidate
    }

    /// The index of ``firstVsync(atOrAfter:)`` for a time given since `origin` (a display's
    /// first vsync): where a boost's end, a report's expiry or a frame's earliest show is
    /// processed, and so where the driver must wake for it.
    func firstVsyncIndex(atOrAfter time: Duration, since origin: Instant) -> UInt64 {
        firstVsync(atOrAfter: origin.advanced(by: time)).index
    }

    /// Moves to the latest vsync at or before `now` (at least one past the last),
    /// skipping over vsyncs a late wake-up missed.
    /// - Returns: the vsync to process and how many vsyncs were missed.
    public mutating func advance(to now: Instant) -> (vsync: Vsync, missed: UInt64) {
        let elapsed = anchor.instant.duration(to: now)
        let onGrid = elapsed < .zero ? 0 : FrameRateMath.wholeNumber((elapsed / period).rounded(.down), clampedTo: 0...(UInt64.max / 2))
        let index = max(last.index + 1, anchor.index + onGrid)
        let missed = index - last.index - 1
        last = vsync(index: index)
        return (last, missed)
    }

    /// Moves to vsync `index` (at least one past the last) on the current grid, as
    /// ``advance(to:)`` would at that vsync's instant, without the floating-point division
    /// that can land one short of it.
    /// - Returns: the vsync and how many vsyncs before it were missed.
    public mutating func advance(toIndex index: UInt64) -> (vsync: Vsync, missed: UInt64) {
        let index = max(last.index + 1, index)
        let missed = index - last.index - 1
        last = vsync(index: index)
        return (last, missed)
    }

    /// Moves ``last`` to the latest vsync at or before `now` without reporting it: for a
    /// driver that did not wake for vsyncs at which nothing happened, so that the next
    /// vsync is after `now` again. Never moves backwards.
    public mutating func skipIdle(to now: Instant) {
        let elapsed = anchor.instant.duration(to: now)
        guard elapsed >= .zero else { return }
        let periods = (elapsed / period).rounded(.down)
        guard periods < Double(Int.max / 2) else { return }
        var index = anchor.index + UInt64(periods)
        // Division rounding: the vsync after `index` may already be at `now`.
        if vsync(index: index + 1).instant <= now { index += 1 }
        if index > last.index { last = vsync(index: index) }
    }

    /// Changes the refresh rate from the last vsync on: the new grid starts at that vsync.
    public mutating func changeRate(to rate: Double) {
        anchor = last
        period = Self.period(of: rate)
    }
}

/// One display link's tick pacing: which vsyncs it ticks on, its sequence
/// numbers, and how many of its intervals passed without a tick.
///
/// A link with divisor `n` ticks on vsyncs whose index is a multiple of `n`, so
/// links with the same callback rate tick on the same vsyncs (and their ticks
/// can be written together). Each of its intervals gets a sequence number,
/// delivered or not, so a delivered tick's `sequence` is always the previous
/// delivered one's plus `skipped + 1`.
///
/// Overrun (seed 001): once a client reports finished frames (``frameDone(sequence:)``),
/// an interval that begins while its previous frame is still unfinished is skipped,
/// never queued; the next tick reports it in `skipped`.
///
/// Times are durations since the display's origin (its first vsync) rather than
/// instants of the display's clock, so the pacer is not generic. The times it reports
/// (the latest tick's, to the attosecond) stay `Duration`s; the per-link comparison of
/// every vsync (is this link due, how late is it) runs on whole nanoseconds (`Int64`):
/// `Duration`'s 128-bit attosecond arithmetic was about a tenth of the tick plane's
/// instructions (`framebench tick-cost` under callgrind), and a nanosecond is far inside
/// its slack (half a refresh period, and a millionth of an interval).
struct LinkPacer: Sendable {
    /// What happened to the link at one vsync.
    enum Outcome: Equatable {
        /// Not one of the link's vsyncs.
        case notDue
        /// Deliver a tick with this sequence and skip count.
        case deliver(sequence: UInt64, skipped: UInt64)
        /// The interval passed without a tick (overrun or undeliverable).
        case skipped
    }

    /// The link ticks on every `divisor`-th vsync.
    private(set) var cadence: CallbackCadence
    /// The sequence number of the link's latest interval, delivered or skipped.
    private(set) var sequence: UInt64 = 0
    /// Intervals skipped since the last delivered tick.
    private(set) var pendingSkips: UInt64 = 0
    /// The sequence of the latest delivered tick.
    private(set) var lastDelivered: UInt64 = 0
    /// The latest sequence the client reported finished.
    private(set) var lastFinished: UInt64 = 0
    /// Whether the client paces itself with frame-done reports (set by its first report).
    private(set) var reportsFrameDone = false
    /// The earliest time of the next tick, since the display's origin, nanoseconds: the previous tick's target.
    private var nextTargetNanoseconds: Int64?
    /// When the latest delivered tick's interval started (its `timestamp`), since the display's origin.
    private(set) var lastDeliveredTime: Duration = .zero
    /// The latest delivered tick's interval (`targetTimestamp - timestamp`).
    private(set) var lastDeliveredInterval: Duration = .zero
    /// Whether the current wait for the latest delivered tick's frame was reported
    /// (``noteHeldBack(at:)``); cleared by the next tick.
    private(set) var heldBackReported = false

    /// How long a link waits for its frame before ``noteHeldBack(at:)`` reports it.
    static let heldBackReportAfter: Duration = .seconds(1)

    init(cadence: CallbackCadence) {
        self.cadence = cadence
    }

    /// A pacer that continues from `checkpoint` with `cadence` (a handover).
    init(cadence: CallbackCadence, restoring checkpoint: LinkPacingCheckpoint) {
        self.cadence = cadence
        self.sequence = checkpoint.sequence
        self.pendingSkips = checkpoint.pendingSkips
        self.lastDelivered = checkpoint.lastDelivered
        self.lastFinished = checkpoint.lastFinished
        self.reportsFrameDone = checkpoint.reportsFrameDone
        self.nextTargetNanoseconds = checkpoint.nextTarget.map(Self.nanoseconds)
        // From a daemon that did not record it: the latest interval's end, never earlier
        // than the tick, so a wait measured from it is never longer than the real one.
        self.lastDeliveredTime = checkpoint.lastDeliveredTime ?? checkpoint.nextTarget ?? .zero
        self.lastDeliveredInterval = checkpoint.lastDeliveredInterval ?? .zero
        self.heldBackReported = checkpoint.heldBackReported
    }

    /// Everything the pacer counts, for a handover.
    var checkpoint: LinkPacingCheckpoint {
        LinkPacingCheckpoint(
            sequence: sequence, pendingSkips: pendingSkips, lastDelivered: lastDelivered, lastFinished: lastFinished,
            reportsFrameDone: reportsFrameDone, nextTarget: nextTargetNanoseconds.map { .nanoseconds($0) }, lastDeliveredTime: lastDeliveredTime,
            lastDeliveredInterval: lastDeliveredInterval, heldBackReported: heldBackReported
        )
    }

    /// Adopts a new callback cadence (rate change or range update). The next tick
    /// still comes no earlier than the last tick's target.
    mutating func setCadence(_ cadence: CallbackCadence) {
        self.cadence = cadence
    }

    /// Forgets pending skips and the last target: a resumed link starts afresh.
    mutating func resume() {
        pendingSkips = 0
        nextTargetNanoseconds = nil
        lastFinished = lastDelivered
        heldBackReported = false
    }

    /// Whether the client is still working on the last delivered tick.
    var isBusy: Bool { reportsFrameDone && lastFinished < lastDelivered }

    /// The frame the link waits for, once at least one of its intervals passed without a
    /// tick because of it; `nil` otherwise (also while it is merely being worked on).
    var awaitedFrame: AwaitedFrame? {
        guard isBusy, pendingSkips > 0 else { return nil }
        return AwaitedFrame(sequence: lastDelivered, tickTime: lastDeliveredTime, skippedIntervals: pendingSkips)
    }

    /// Called when an interval was skipped at `time` (since the display's origin): the
    /// awaited frame and how long the link has waited for it, once per wait, when that is
    /// at least ``heldBackReportAfter``; `nil` otherwise.
    mutating func noteHeldBack(at time: Duration) -> (frame: AwaitedFrame, waited: Duration)? {
        let waited = time - lastDeliveredTime
        guard !heldBackReported, waited >= Self.heldBackReportAfter, let frame = awaitedFrame else { return nil }
        heldBackReported = true
        return (frame, waited)
    }

    /// Records that the client finished the frame for `sequence`.
    /// - Returns: `false` when that sequence was never delivered.
    mutating func frameDone(sequence: UInt64) -> Bool {
        guard sequence <= lastDelivered else { return false }
        reportsFrameDone = true
        lastFinished = max(lastFinished, sequence)
        return true
    }

    /// What a timed finished-frame report measured.
    enum FrameMeasurement: Equatable {
        /// That sequence was never delivered.
        case notDelivered
        /// Nothing to measure: not the latest delivered tick's first report.
        case unmeasured
        /// The frame took `frameTime` from its tick, against its `interval`.
        case measured(frameTime: Duration, interval: Duration)
    }

    /// Records that the client finished the frame for `sequence` at `time` (since the
    /// display's origin), like ``frameDone(sequence:)``, and measures it from its tick.
    mutating func frameFinished(sequence: UInt64, at time: Duration) -> FrameMeasurement {
        let first = sequence == lastDelivered && sequence > lastFinished && lastDelivered > 0
        guard frameDone(sequence: sequence) else { return .notDelivered }
        guard first else { return .unmeasured }
        return .measured(frameTime: Swift.max(.zero, time - lastDeliveredTime), interval: lastDeliveredInterval)
    }

    /// `duration` in nanoseconds, to the nearest, within ±`Int64.max / 4`: sums and
    /// doubles of such values cannot overflow, and a sum of two is within a nanosecond of
    /// the exact one.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let bound = Int64.max / 4
        return Swift.min(bound, Swift.max(-bound, FrameRateMath.nanoseconds(duration)))
    }

    /// Processes the vsync with `index` at `time` (since the display's origin) on a
    /// timeline with `period`; `canDeliver` says whether the link's owner can take a tick now.
    mutating func vsync(index: UInt64, at time: Duration, period: Duration, canDeliver: Bool) -> Outcome {
        vsync(index: index, at: VsyncTime(time: time, period: period), canDeliver: canDeliver)
    }

    /// A vsync's time and period, with their whole nanoseconds (``nanoseconds(_:)``):
    /// converted once per vsync for all of a display's links.
    struct VsyncTime {
        let time: Duration
        let period: Duration
        let timeNanoseconds: Int64
        let periodNanoseconds: Int64

        init(time: Duration, period: Duration) {
            self.time = time
            self.period = period
            timeNanoseconds = LinkPacer.nanoseconds(time)
            periodNanoseconds = LinkPacer.nanoseconds(period)
        }
    }

    /// ``vsync(index:at:period:canDeliver:)`` with the vsync's times converted once.
    mutating func vsync(index: UInt64, at vsync: VsyncTime, canDeliver: Bool) -> Outcome {
        let divisor = cadence.divisor
        // A cadence's divisor is at least 1 (CallbackCadence clamps it), so the conversion is exact.
        guard index % UInt64(divisor) == 0 else { return .notDue }
        let (time, period) = (vsync.timeNanoseconds, vsync.periodNanoseconds)
        // Both within ±Int64.max / 4 (``nanoseconds(_:)``); a product past it saturates.
        let product = period.multipliedReportingOverflow(by: Int64(divisor))
        let interval = divisor == 1 ? period : (product.overflow ? Int64.max / 4 : Swift.min(product.partialValue, Int64.max / 4))
        var intervals: UInt64 = 1
        if let nextTarget = nextTargetNanoseconds {
            let lateness = time - nextTarget
            // Half a refresh period of slack absorbs rate changes between grids.
            if lateness + lateness < -period { return .notDue }
            if lateness > 0 && interval > 0 {
                intervals += FrameRateMath.wholeNumber((Double(lateness) / Double(interval) + 1e-6).rounded(.down), clampedTo: 0...(UInt64.max / 4))
            }
        }
        nextTargetNanoseconds = Swift.min(Int64.max / 4, time + interval)
        sequence += intervals
        if isBusy || !canDeliver {
            pendingSkips += intervals
            return .skipped
        }
        let skipped = pendingSkips + intervals - 1
        pendingSkips = 0
        heldBackReported = false
        lastDelivered = sequence
        // The reported times stay exact (to the attosecond): a wait is measured from them.
        lastDeliveredTime = vsync.time
        lastDeliveredInterval = divisor == 1 ? vsync.period : FrameRateMath.times(vsync.period, divisor)
        return .deliver(sequence: sequence, skipped: skipped)
    }
}

/// Where a link's next frames fall, as decided at one of its ticks: the vsyncs at which
/// its pacer will start its following intervals, on the display's grid, with a rate
/// change the governor has already decided (a decrease waiting out its dwell) applied
/// from the vsync it is due at.
///
/// Frame `k` (from 0) is the `k + 1`-th interval boundary after the tick: frame 0 is the
/// tick's `targetTimestamp` (unless a decided change falls inside the tick's own
/// interval, which needs a divisor of at least 2: then it is where the pacer will really
/// start the next interval). Each frame names its vsync by **vsync id**: the display's
/// vsync index (``VsyncTimeline/Vsync/index``), which counts vsyncs since the display's
/// timeline started, across rate changes, and carries over a handover (the checkpoint
/// keeps the grid's indices).
///
/// Times are durations since the display's origin (its first vsync), like ``LinkPacer``'s.
/// The arithmetic follows ``LinkPacer/vsync(index:at:period:canDeliver:)``: a link with
/// divisor `n` ticks on vsyncs whose index is a multiple of `n`, and after a rate change
/// at the first such vsync no earlier than half a new period before its previous target.
public struct FrameSchedule: Hashable, Sendable {
    /// One frame: the vsync where it begins (its deadline, and where a frame aimed at it shows).
    public struct Frame: Hashable, Sendable {
        /// The display's vsync index of that vsync.
        public let vsyncID: UInt64
        /// When that vsync happens, since the display's origin.
        public let time: Duration
    }

    /// A vsync grid with one link's divisor on it: vsync `index` is at `time + (index - anchor) * period`.
    public struct Grid: Hashable, Sendable {
        /// A vsync of the grid: its index.
        public let anchor: UInt64
        /// That vsync's time since the display's origin.
        public let time: Duration
        /// The refresh period.
        public let period: Duration
        /// The link's divisor on this grid (at least 1).
        public let divisor: Int

        /// Builds a grid; a divisor below 1 counts as 1.
        public init(anchor: UInt64, time: Duration, period: Duration, divisor: Int) {
            self.anchor = anchor
            self.time = time
            self.period = period
            self.divisor = Swift.max(1, divisor)
        }

        /// The time of vsync `index` (at or after ``anchor``).
        func time(of index: UInt64) -> Duration {
            // The schedule looks a few intervals ahead of its anchor: far below Int.max vsyncs.
            time + FrameRateMath.times(period, Int(clamping: index - anchor))
        }
    }

    /// The most frames a tick offers (`timelines` is 1 to 7) and a `Present` may aim at.
    public static let maximumFrames = 7

    /// The tick's vsync and grid.
    public let tick: Grid
    /// The grid from the decided rate change on (its anchor is the vsync the change is due at), if any.
    public let change: Grid?

    /// A schedule from a tick at vsync `tick.anchor`, with the change due at `change.anchor`, if any.
    public init(tick: Grid, change: Grid? = nil) {
        self.tick = tick
        // A change at or before the tick's vsync is already in force: the tick's grid is the new one.
        self.change = change.flatMap { $0.anchor > tick.anchor ? $0 : nil }
    }

    /// The first `count` frames, earliest first.
    public func frames(_ count: Int) -> [Frame] {
        var frames: [Frame] = []
        frames.reserveCapacity(Swift.max(0, count))
        var index = tick.anchor
        var time = tick.time
        var grid = tick
        for _ in 0..<Swift.max(0, count) {
            (index, time, grid) = next(after: index, at: time, on: grid)
            frames.append(Frame(vsyncID: index, time: time))
        }
        return frames
    }

    /// The vsync of the pacer's next interval after one that started at vsync `index` (at
    /// `time`) on `grid`, and the grid there.
    private func next(after index: UInt64, at time: Duration, on grid: Grid) -> (UInt64, Duration, Grid) {
        let divisor = UInt64(grid.divisor)
        let target = time + FrameRateMath.times(grid.period, grid.divisor)
        guard let change, index + divisor >= change.anchor, index < change.anchor else {
            let next = index + divisor
            return (next, grid.time(of: next), grid)
        }
        // The interval ends on the new grid: the first vsync there that is a multiple of its
        // divisor and no earlier than half a new period before `target`.
        let newDivisor = UInt64(change.divisor)
        let earliest = target - change.period / 2
        var candidate = (change.anchor + newDivisor - 1) / newDivisor * newDivisor
        let ahead = earliest - change.time(of: candidate)
        if ahead > .zero {
            // Whole new intervals to skip; bounded by the old interval over the new one.
            let intervals = FrameRateMath.wholeNumber((ahead / FrameRateMath.times(change.period, change.divisor)).rounded(.up), clampedTo: 0...(1 << 20))
            candidate += UInt64(intervals) * newDivisor
        }
        while candidate >= change.anchor + newDivisor, change.time(of: candidate - newDivisor) >= earliest { candidate -= newDivisor }
        while change.time(of: candidate) < earliest { candidate += newDivisor }
        return (candidate, change.time(of: candidate), change)
    }
}

/// One link's hitch accounting: totals since it registered, and the hitch-time ratio
/// over a sliding window of its unpaused time.
///
/// A pure state machine over durations since the display's origin. Its memory is
/// bounded: late frames inside the window (at most ``lateLimit``; the array holds at most
/// twice that, as frames that left the window are dropped in bulk) and pause intervals
/// overlapping it (at most ``pauseLimit``; beyond that the oldest is forgotten, which
/// counts that pause as unpaused time).
struct HitchCounter: Sendable {
    /// The window of the ratio: 10 s.
    static let window = Duration.seconds(10)
    /// Lateness below this (1 µs) is grid rounding, not a hitch.
    static let tolerance = Duration.microseconds(1)
    static let lateLimit = 4096
    static let pauseLimit = 64

    private(set) var frames: UInt64 = 0
    private(set) var late: UInt64 = 0
    private(set) var dropped: UInt64 = 0
    private(set) var hitchTime = Duration.zero
    /// Since when the link exists (its registration).
    private let since: Duration
    /// Late frames inside the window, oldest first: when shown, and ``hitchTime`` before
    /// it counted. The window's hitch time is then one subtraction, `hitchTime` minus the
    /// total before the first late frame in the window, found by binary search: a summary
    /// costs O(log n), not a walk of up to ``lateLimit`` frames for every link in every
    /// snapshot, which the model's lock holds while it is built. The entries before
    /// ``recentLateStart`` have left the window and are dropped in bulk once they are half
    /// the array: removing each as it left moved the whole window (up to 1,200 entries
    /// at 120 Hz, 38 KB) for every late frame, on the tick plane under the model lock.
    private var recentLate: [(at: Duration, totalBefore: Duration)] = []
    /// The first entry of ``recentLate`` still in the window.
    private var recentLateStart = 0
    /// Paused intervals overlapping the window, oldest first; the last may be open (`to == nil`).
    private var pauses: [(from: Duration, to: Duration?)] = []
    /// The latest time the counter heard of.
    private(set) var latest: Duration

    /// A counter for a link registered at `since`, paused then or not.
    init(since: Duration, paused: Bool, now: Duration) {
        self.since = since
        self.latest = now
        if paused { pauses.append((since, nil)) }
    }

    /// A frame shown at `time`, `hitch` late.
    mutating func shown(at time: Duration, hitch: Duration) {
        latest = max(latest, time)
        frames += 1
        guard hitch >= Self.tolerance else { return }
        late += 1
        prune(before: time - Self.window)
        if recentLate.count - recentLateStart == Self.lateLimit { dropLate(through: recentLateStart + 1) }
        recentLate.append((time, hitchTime))
        hitchTime += hitch
    }

    /// Late frames in the window (after pruning at the latest frame or pause).
    var recentLateCount: Int { recentLate.count - recentLateStart }

    /// A frame replaced before it was shown.
    mutating func droppedFrame() { dropped += 1 }

    /// The link was paused or resumed at `time`.
    mutating func setPaused(_ paused: Bool, at time: Duration) {
        latest = max(latest, time)
        let open = pauses.last.map { $0.to == nil } ?? false
        if paused && !open {
            prune(before: time - Self.window)
            if pauses.count == Self.pauseLimit { pauses.removeFirst() }
            pauses.append((time, nil))
        } else if !paused && open {
            pauses[pauses.count - 1].to = time
        }
    }

    private mutating func prune(before start: Duration) {
        dropLate(through: firstLate(after: start))
        pauses.removeAll { ($0.to.map { $0 <= start }) ?? false }
    }

    /// Drops the late frames before index `end` of ``recentLate``: amortised O(1) a frame,
    /// as the array is compacted only once the dropped entries are half of it.
    private mutating func dropLate(through end: Int) {
        guard end > recentLateStart else { return }
        recentLateStart = end
        if recentLateStart == recentLate.count {
            recentLate.removeAll(keepingCapacity: true)
            recentLateStart = 0
        } else if recentLateStart >= recentLate.count / 2 {
            recentLate.removeFirst(recentLateStart)
            recentLateStart = 0
        }
    }

    /// The summary at `now` (since the display's origin).
    func summary(at now: Duration) -> HitchSummary {
        let end = max(now, latest)
        let start = max(since, end - Self.window)
        // Every entry is at or before `latest`, so at or before `end`: the window holds the
        // entries after `start`, to the last.
        let first = firstLate(after: start)
        let hitch = first < recentLate.count ? hitchTime - recentLate[first].totalBefore : .zero
        var paused = Duration.zero
        for pause in pauses {
            let from = max(pause.from, start)
            let to = min(pause.to ?? end, end)
            if to > from { paused += to - from }
        }
        let unpaused = (end - start) - paused
        let ratio = unpaused > .zero ? Self.milliseconds(hitch) / Self.seconds(unpaused) : 0
        return HitchSummary(
            frames: frames, late: late, dropped: dropped, hitchTime: hitchTime, ratioMillisecondsPerSecond: ratio, window: Self.window
        )
    }

    /// The index of the first late frame in the window shown after `time`
    /// (`recentLate.count` if none); frames are recorded in the order they are shown.
    private func firstLate(after time: Duration) -> Int {
        var low = recentLateStart
        var high = recentLate.count
        while low < high {
            let middle = low + (high - low) / 2
            if recentLate[middle].at > time { high = middle } else { low = middle + 1 }
        }
        return low
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    static func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1000 }
}

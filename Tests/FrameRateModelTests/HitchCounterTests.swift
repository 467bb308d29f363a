import Testing

@testable import FrameRateModel

/// The hitch window's sum, kept as running totals, against a walk of every late frame.
@Suite struct HitchCounterTests {
    @Test("the window's hitch time equals the sum of the late frames inside it, at every time asked", arguments: [1 as UInt64, 2, 3])
    func windowSumMatchesAWalkOfTheFrames(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let since = Duration.seconds(2)
        var counter = HitchCounter(since: since, paused: false, now: since)
        var frames: [(at: Duration, hitch: Duration)] = []
        var time = since
        // 3,000 frames 8.3 ms apart (25 s), a third of them late by up to 50 ms.
        for _ in 0..<3000 {
            time += .microseconds(8_333)
            let hitch = Int.random(in: 0..<3, using: &rng) == 0 ? Duration.microseconds(Int64.random(in: 1...50_000, using: &rng)) : .zero
            counter.shown(at: time, hitch: hitch)
            if hitch >= HitchCounter.tolerance { frames.append((time, hitch)) }
            // Asked now, and at times after the last frame (the window moving past it).
            for later in [Duration.zero, .milliseconds(3), .seconds(4), .seconds(11)] where Int.random(in: 0..<50, using: &rng) == 0 || later == .zero {
                let now = time + later
                let start = max(since, now - HitchCounter.window)
                var expected = Duration.zero
                for frame in frames where frame.at > start && frame.at <= now { expected += frame.hitch }
                let summary = counter.summary(at: now)
                let unpaused = HitchCounter.seconds(now - start)
                let ratio = unpaused > 0 ? HitchCounter.milliseconds(expected) / unpaused : 0
                #expect(summary.ratioMillisecondsPerSecond == ratio, "at \(now): \(summary.ratioMillisecondsPerSecond) against \(ratio)")
            }
        }
        #expect(counter.late == UInt64(frames.count) && frames.count > 500)
        #expect(counter.hitchTime == frames.reduce(.zero) { $0 + $1.hitch })
    }

    @Test("every frame late, more of them in the window than it keeps: the newest 4,096 count, and no more are kept")
    func everyFrameLatePastTheLimit() {
        var rng = SeededGenerator(seed: 7)
        let since = Duration.seconds(1)
        var counter = HitchCounter(since: since, paused: false, now: since)
        var hitches: [(at: Duration, hitch: Duration)] = []
        var time = since
        // 1 ms apart for 15 s: 10,000 in each full window, past the 4,096 kept.
        for index in 0..<15_000 {
            time += .milliseconds(1)
            let hitch = Duration.microseconds(Int64.random(in: 1...20_000, using: &rng))
            counter.shown(at: time, hitch: hitch)
            hitches.append((time, hitch))
            #expect(counter.recentLateCount <= HitchCounter.lateLimit)
            guard index % 97 == 0 || index > 14_990 else { continue }
            let start = max(since, time - HitchCounter.window)
            let kept = hitches.suffix(HitchCounter.lateLimit).filter { $0.at > start }
            let expected = kept.reduce(Duration.zero) { $0 + $1.hitch }
            let ratio = HitchCounter.milliseconds(expected) / HitchCounter.seconds(time - start)
            #expect(counter.summary(at: time).ratioMillisecondsPerSecond == ratio, "at \(time)")
        }
        #expect(counter.recentLateCount == HitchCounter.lateLimit)
        #expect(counter.late == 15_000)
        // After more than a window with no frame, one late frame is all the window holds.
        time += HitchCounter.window + .seconds(1)
        counter.shown(at: time, hitch: .milliseconds(5))
        #expect(counter.recentLateCount == 1)
        #expect(counter.summary(at: time).ratioMillisecondsPerSecond == 5 / HitchCounter.seconds(HitchCounter.window))
    }
}

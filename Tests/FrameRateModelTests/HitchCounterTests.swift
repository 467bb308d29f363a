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
}

import FrameRateModel
import FrameRateTesting
import Testing

/// Rate-change timing on a stepped clock: increases at the next vsync, decreases
/// after the dwell, the idle drop after the timeout. No test here sleeps.
@Suite("Refresh-rate timing")
struct RateChangeTimingTests {
    @Test("an increase takes effect at the very next vsync")
    func increaseAtNextVsync() throws {
        var harness = Harness()
        try harness.run(seconds: 0.1)
        #expect(harness.refreshRate == 60)
        let registeredAt = harness.clock.now
        try harness.register(80, 120, 120, entitled: true)
        let next = try harness.compositor.nextVsync(of: harness.display)
        let report = try #require(try harness.run(seconds: 1).first)
        #expect(report.vsync == next)
        #expect(report.rateChange?.to == 120)
        #expect(registeredAt.duration(to: report.vsync) <= .seconds(1.0 / 60))
        #expect(harness.refreshRate == 120)
    }

    @Test("a decrease waits for the dwell, then happens at the first vsync after it")
    func decreaseAfterDwell() throws {
        var harness = Harness()
        try harness.register(80, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 120)
        let link = harness.compositor.snapshot[0].links[0].link
        let wantedAt = harness.clock.now
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: try FrameRateRange(minimum: 24, maximum: 24, preferred: 24), at: wantedAt)
        let reports = try harness.run(seconds: 1)
        let change = try #require(reports.first { $0.rateChange != nil })
        #expect(change.rateChange?.to == 24)
        let waited = wantedAt.duration(to: change.vsync)
        #expect(waited >= .milliseconds(250))
        #expect(waited < .milliseconds(250) + .seconds(1.0 / 120) + .nanoseconds(1))
        // Every vsync before the change still ran at 120 Hz.
        #expect(reports.prefix { $0.rateChange == nil }.allSatisfy { $0.ticks.allSatisfy { $0.refreshRate == 120 } })
    }

    @Test("a decrease cancelled within the dwell never happens")
    func decreaseCancelled() throws {
        var harness = Harness()
        try harness.register(80, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        let link = harness.compositor.snapshot[0].links[0].link
        _ = try harness.compositor.update(link: link, owner: harness.owner, paused: true, at: harness.clock.now)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: try FrameRateRange(minimum: 30, maximum: 30, preferred: 30), at: harness.clock.now)
        try harness.run(seconds: 0.1)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), paused: false, at: harness.clock.now)
        let reports = try harness.run(seconds: 1)
        #expect(reports.allSatisfy { $0.rateChange == nil })
        #expect(harness.refreshRate == 120)
    }

    @Test("with no voting link the display holds for the idle timeout, then drops after the dwell")
    func idleDrop() throws {
        var harness = Harness()
        let status = try harness.register(30, 60, 60)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 60)
        let releasedAt = harness.clock.now
        try harness.compositor.invalidate(link: status.link, owner: harness.owner, at: releasedAt)
        let reports = try harness.run(seconds: 3)
        let change = try #require(reports.first { $0.rateChange != nil })
        #expect(change.rateChange?.to == 10)
        let waited = releasedAt.duration(to: change.vsync)
        #expect(waited >= .seconds(1) + .milliseconds(250))
        #expect(waited < .seconds(1) + .milliseconds(250) + .seconds(1.0 / 60) + .nanoseconds(1))
        #expect(reports.filter { $0.rateChange != nil }.count == 1)
    }

    @Test("a monitoring link (10, current, 0) observes without steering")
    func monitoringLink() throws {
        var harness = Harness()
        try harness.register(80, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        try harness.register(10, 120, 0, entitled: true)
        try harness.run(seconds: 2)
        #expect(harness.refreshRate == 120)
        #expect(harness.callbackRates == [120, 120])
    }
}

/// Tick timelines on random workloads: strictly increasing timestamps on the
/// vsync grid, sequences without gaps except reported skips, targets one callback interval ahead.
@Suite("Tick timeline properties")
struct TickTimelineTests {
    @Test("timelines are strictly increasing with no gaps except reported skips", arguments: Array(UInt64(1)...60))
    func timeline(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var harness = Harness()
        var links: [LinkID] = []
        for _ in 0..<Int.random(in: 1...5, using: &rng) {
            let range = ArbitrationPropertyTests.randomRange(&rng, profile: .promotionPhone)
            links.append(try harness.register(range.minimum, range.maximum, range.preferred, entitled: Bool.random(using: &rng)).link)
        }
        var last: [LinkID: Tick<ManualClock.Instant>] = [:]
        var vsyncs: [ManualClock.Instant] = []
        for step in 0..<400 {
            // Sometimes wake late by up to three frames; sometimes change a link; sometimes an owner cannot take ticks.
            if Int.random(in: 0..<10, using: &rng) == 0 {
                harness.clock.advance(by: .milliseconds(Int.random(in: 1...25, using: &rng)))
            }
            if step % 97 == 50, let link = links.randomElement(using: &rng) {
                let range = ArbitrationPropertyTests.randomRange(&rng, profile: .promotionPhone)
                _ = try harness.compositor.update(link: link, owner: harness.owner, range: range, at: harness.clock.now)
            }
            let blocked = Int.random(in: 0..<8, using: &rng) == 0
            harness.clock.advance(to: max(harness.clock.now, try harness.compositor.nextVsync(of: harness.display)))
            let report = try harness.compositor.vsync(of: harness.display, at: harness.clock.now) { _ in !blocked }
            if let previous = vsyncs.last { #expect(previous < report.vsync) }
            vsyncs.append(report.vsync)
            #expect(report.vsync <= harness.clock.now)
            for tick in report.ticks {
                #expect(tick.timestamp == report.vsync)
                let interval = tick.timestamp.duration(to: tick.targetTimestamp) / .seconds(1)
                #expect(abs(interval - 1 / tick.callbackRate) < 1e-9)
                #expect(abs(tick.duration / .seconds(1) - 1 / tick.refreshRate) < 1e-12)
                if let previous = last[tick.link] {
                    #expect(previous.timestamp < tick.timestamp)
                    #expect(tick.sequence == previous.sequence + tick.skipped + 1)
                } else {
                    #expect(tick.sequence == tick.skipped + 1)
                }
                last[tick.link] = tick
                // Clients report their frames done most of the time; sometimes they overrun.
                if Int.random(in: 0..<4, using: &rng) != 0 {
                    try harness.compositor.frameDone(link: tick.link, owner: tick.owner, sequence: tick.sequence)
                }
            }
        }
        #expect(!last.isEmpty)
    }

    @Test("an overrunning client skips intervals instead of queueing them")
    func overrunSkips() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true).link
        let first = try harness.run(seconds: 0.05).flatMap(\.ticks)
        let lastTick = try #require(first.last)
        // The client reports frame done once (opting in to pacing), then is busy for 3 intervals.
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: lastTick.sequence)
        let busy = try #require(try harness.run(seconds: 1.0 / 120 + 0.001).flatMap(\.ticks).last)
        let during = try harness.run(seconds: 3.0 / 120).flatMap(\.ticks)
        #expect(during.isEmpty, "no tick while the previous frame is unfinished")
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: busy.sequence)
        let next = try #require(try harness.run(seconds: 1.0 / 120).flatMap(\.ticks).first)
        #expect(next.skipped == 3)
        #expect(next.sequence == busy.sequence + 4)
    }

    @Test("frame done for a sequence never sent is refused")
    func frameDoneFuture() throws {
        var harness = Harness()
        let link = try harness.register(60, 60, 60).link
        #expect(throws: CompositorError.sequenceNotDelivered(link, sequence: 5, lastDelivered: 0)) {
            try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: 5)
        }
        #expect(throws: CompositorError.linkNotFound(link)) {
            try harness.compositor.frameDone(link: link, owner: OwnerID(rawValue: 99), sequence: 0)
        }
    }

    @Test("paused links get no ticks and do not vote")
    func pausedLinks() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true, paused: true).link
        let reports = try harness.run(seconds: 2)
        #expect(reports.allSatisfy { $0.ticks.isEmpty })
        #expect(harness.refreshRate == 10)
        _ = try harness.compositor.update(link: link, owner: harness.owner, paused: false, at: harness.clock.now)
        let resumed = try harness.run(seconds: 0.5).flatMap(\.ticks)
        #expect(resumed.first?.skipped == 0)
        #expect(harness.refreshRate == 120)
    }
}

@Suite("Status reasons")
struct StatusReasonTests {
    @Test("a pending change says when it will happen: next vsync, after the dwell, or after idle")
    func pendingChangeReasons() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true).link
        #expect(harness.compositor.snapshot[0].reason.contains("moving to 120 Hz at the next vsync"))
        try harness.run(seconds: 0.5)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: try FrameRateRange(minimum: 30, maximum: 30, preferred: 30), at: harness.clock.now)
        #expect(harness.compositor.snapshot[0].reason.contains("moving to 30 Hz after the decrease dwell"))
        try harness.compositor.invalidate(link: link, owner: harness.owner, at: harness.clock.now)
        #expect(harness.compositor.snapshot[0].reason.contains("moving to 10 Hz once the idle timeout and the decrease dwell pass"))
    }
}

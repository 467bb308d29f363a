import FrameRateModel
import FrameRateTesting
import Testing

extension Harness {
    /// Registers an entitled link with `range`, `timelines` and frame latency `latency`.
    mutating func registerTimed(_ range: FrameRateRange, timelines: Int, latency: Int = 1) throws -> LinkID {
        var configuration = DisplayLinkConfiguration(range: range, hasHighFrameRateEntitlement: true)
        configuration.timelines = timelines
        configuration.frameLatency = latency
        return try compositor.register(owner: owner, configuration: configuration, at: clock.now).link
    }

    /// Presents `link`'s next tick at once and runs until it shows: from then on the link's
    /// recent ticks are kept, so a later `Present` may name one a few ticks old.
    mutating func presentOnce(_ link: LinkID) throws {
        let (tick, _) = try #require(try ticks(of: link, count: 1).first)
        try present(tick, of: link)
        // Present counts as FrameDone: finish the ticks delivered meanwhile, or the link skips.
        for later in try run(until: tick.targetPresentationTimestamp).flatMap(\.ticks) where later.link == link {
            try compositor.frameDone(link: link, owner: owner, sequence: later.sequence)
        }
    }

    /// Runs vsync by vsync until `count` ticks of `link` were delivered; returns them with their vsync's index.
    mutating func ticks(of link: LinkID, count: Int) throws -> [(tick: Tick<ManualClock.Instant>, index: UInt64)] {
        var ticks: [(Tick<ManualClock.Instant>, UInt64)] = []
        while ticks.count < count {
            clock.advance(to: try compositor.nextVsync(of: display))
            let report = try compositor.vsync(of: display, at: clock.now, canDeliver: { _ in true })
            for tick in report.ticks where tick.link == link { ticks.append((tick, report.index)) }
        }
        return ticks
    }
}

private let period120 = Duration.seconds(1.0 / 120)
private let range120 = try! FrameRateRange(minimum: 80, maximum: 120, preferred: 120)

/// Frame timelines and frame latency (issue 14 §1-2) on a stepped clock, with exact times.
@Suite("Frame timelines and frame latency")
struct FrameTimelineTests {
    @Test("three timelines at 120 Hz: the next three vsyncs, the first at targetTimestamp, ids counting vsyncs")
    func threeTimelines() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 3)
        try harness.run(seconds: 0.05)
        let (tick, index) = try #require(try harness.ticks(of: link, count: 1).first)
        let entries = tick.timelines(sentAt: tick.timestamp)
        #expect(entries.count == 3)
        for (k, entry) in entries.enumerated() {
            #expect(entry.vsyncID == index + UInt64(k) + 1)
            #expect(entry.deadline == tick.timestamp.advanced(by: period120 * (k + 1)))
            #expect(entry.presentationTime == entry.deadline)
        }
        #expect(entries[0].deadline == tick.targetTimestamp)
        #expect(tick.targetPresentationTimestamp == tick.targetTimestamp)
    }

    @Test("a link that asked for nothing has no schedule and its presentation is its target")
    func plainLink() throws {
        var harness = Harness()
        let link = try harness.link120()
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        #expect(tick.schedule == nil)
        #expect(tick.timelines(sentAt: tick.timestamp).isEmpty)
        #expect(tick.targetPresentationTimestamp == tick.targetTimestamp)
    }

    @Test("latency 2 at 30 Hz on a 120 Hz panel: presentation one 33.3 ms interval after each deadline")
    func latencyTwo() throws {
        var harness = Harness()
        _ = try harness.registerTimed(range120, timelines: 1)
        let link = try harness.registerTimed(try FrameRateRange(minimum: 30, maximum: 30, preferred: 30), timelines: 2, latency: 2)
        try harness.run(seconds: 0.05)
        let (tick, index) = try #require(try harness.ticks(of: link, count: 1).first)
        #expect(tick.callbackRate == 30)
        let interval = period120 * 4
        #expect(tick.targetTimestamp == tick.timestamp.advanced(by: interval))
        #expect(tick.targetPresentationTimestamp == tick.timestamp.advanced(by: interval * 2))
        let entries = tick.timelines(sentAt: tick.timestamp)
        #expect(entries.map(\.deadline) == [tick.timestamp.advanced(by: interval), tick.timestamp.advanced(by: interval * 2)])
        #expect(entries.map(\.presentationTime) == [tick.timestamp.advanced(by: interval * 2), tick.timestamp.advanced(by: interval * 3)])
        #expect(entries.map(\.vsyncID) == [index + 8, index + 12])
        #expect(entries[0].presentationTime == tick.targetPresentationTimestamp)
    }

    @Test("entries whose deadline passed at send time are left out; the array is never empty")
    func pastDeadlines() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 3)
        try harness.run(seconds: 0.05)
        let (tick, index) = try #require(try harness.ticks(of: link, count: 1).first)
        let at = { (k: Int) in tick.timestamp.advanced(by: period120 * k) }
        // A deadline exactly at the send time can still be met.
        #expect(tick.timelines(sentAt: at(2)).map(\.vsyncID) == [index + 2, index + 3])
        #expect(tick.timelines(sentAt: at(2).advanced(by: .nanoseconds(1))).map(\.vsyncID) == [index + 3])
        // All three passed: the first later frame still ahead stands alone.
        let late = tick.timelines(sentAt: at(5).advanced(by: .nanoseconds(1)))
        #expect(late.map(\.vsyncID) == [index + 6])
        #expect(late[0].deadline == at(6))
        // Even the seventh frame passed: that one, rather than nothing.
        #expect(tick.timelines(sentAt: at(100)).map(\.vsyncID) == [index + 7])
    }

    @Test("a decided decrease is in the entries after it: they predict the ticks that follow, ids and times")
    func pendingDecrease() throws {
        var harness = Harness()
        let link = try harness.registerTimed(try FrameRateRange(minimum: 40, maximum: 120, preferred: 0), timelines: 7)
        let holder = try harness.registerTimed(range120, timelines: 1)
        try harness.run(seconds: 0.1)
        #expect(harness.refreshRate == 120)
        _ = try harness.compositor.update(link: holder, owner: harness.owner, paused: true, at: harness.clock.now)
        let decision = harness.compositor.snapshot[0].decision
        let pending = try #require(decision.pending)
        #expect(pending.rate < 120)
        let newPeriod = Duration.seconds(1 / pending.rate)
        // Ticks through the dwell and well past the change.
        let ticks = try harness.ticks(of: link, count: 60)
        let changeIndex = try #require(ticks.firstIndex { $0.tick.refreshRate != 120 })
        let spanning = ticks[..<changeIndex].filter { entry in
            entry.tick.timelines(sentAt: entry.tick.timestamp).contains { $0.deadline.duration(to: ticks[changeIndex].tick.timestamp) <= .zero }
        }
        #expect(!spanning.isEmpty)
        for (position, (tick, _)) in ticks.enumerated() where position + 7 < ticks.count {
            let entries = tick.timelines(sentAt: tick.timestamp)
            #expect(entries.count == 7)
            let following = ticks[(position + 1)...(position + 7)]
            #expect(entries.map(\.vsyncID) == following.map(\.index))
            #expect(entries.map(\.deadline) == following.map(\.tick.timestamp))
        }
        // Across the change the spacing moves from 1/120 s to the new period.
        let close = { (a: Duration, b: Duration) in a - b < .nanoseconds(1) && b - a < .nanoseconds(1) }
        let gaps = spanning.flatMap { entry in
            let entries = entry.tick.timelines(sentAt: entry.tick.timestamp)
            return zip(entries.dropFirst(), entries).map { $1.deadline.duration(to: $0.deadline) }
        }
        #expect(gaps.contains { close($0, period120) } && gaps.contains { close($0, newPeriod) })
        #expect(!close(newPeriod, period120))
    }

    @Test(
        "a late wake-up that passes over a decided decrease's vsync keeps the new grid the timelines promised",
        arguments: [Duration.milliseconds(1), .milliseconds(9), .milliseconds(30)]
    )
    func lateWakeKeepsThePromisedGrid(lateBy extra: Duration) throws {
        var harness = Harness()
        let link = try harness.registerTimed(try FrameRateRange(minimum: 40, maximum: 120, preferred: 0), timelines: 7)
        let holder = try harness.registerTimed(range120, timelines: 1)
        try harness.run(seconds: 0.1)
        _ = try harness.compositor.update(link: holder, owner: harness.owner, paused: true, at: harness.clock.now)
        let pending = try #require(harness.compositor.snapshot[0].decision.pending)
        let due = harness.compositor.instant(sinceStart: pending.at)
        // Step every vsync before the change, keeping the link's ticks.
        var ticks: [Tick<ManualClock.Instant>] = []
        while try harness.compositor.nextVsync(of: harness.display) < due {
            harness.clock.advance(to: try harness.compositor.nextVsync(of: harness.display))
            ticks += try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true }).ticks.filter { $0.link == link }
        }
        let promised = try #require(ticks.last).timelines(sentAt: try #require(ticks.last).timestamp).map(\.deadline)
        #expect(promised.contains(due))
        let residencyAtNewRate = { (harness: Harness) in
            harness.compositor.snapshot(at: harness.clock.now)[0].residency.first { $0.rate == pending.rate }?.time ?? .zero
        }
        let before = residencyAtNewRate(harness)
        // Wake a whole 120 Hz period (and `extra`) after the change's vsync: it is passed over.
        harness.clock.advance(to: due.advanced(by: period120 + extra))
        let late = try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true })
        #expect(late.rateChange?.to == pending.rate)
        #expect(late.vsync <= harness.clock.now)
        // The report says when the change took effect (what a trace stamps it with).
        #expect((late.rateChangeVsync ?? late.vsync) == due)
        // The new rate holds residency from the change's vsync, not from the one processed.
        #expect(residencyAtNewRate(harness) - before == due.duration(to: harness.clock.now))
        ticks += late.ticks.filter { $0.link == link }
        for _ in 0..<8 {
            harness.clock.advance(to: try harness.compositor.nextVsync(of: harness.display))
            ticks += try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true }).ticks.filter { $0.link == link }
        }
        let stamps = Set(ticks.map(\.timestamp))
        // The new grid starts at the change's own vsync: every vsync of it from then on is at
        // due + k × the new period, so each promised deadline that the late wake-up did not
        // pass over is a later tick's timestamp.
        let kept = promised.filter { $0 >= late.vsync }
        #expect(!kept.isEmpty)
        // The change's own vsync was processed (late) unless the wake-up came after the new
        // grid's next one; then the link's tick says it skipped it.
        let lateTick = try #require(late.ticks.first { $0.link == link })
        #expect(late.vsync == due ? lateTick.skipped == 0 : lateTick.skipped >= 1)
        for deadline in kept where deadline <= ticks.last!.timestamp {
            #expect(stamps.contains(deadline), "promised deadline \(deadline) is no tick's timestamp")
        }
        #expect(ticks.allSatisfy { $0.timestamp <= harness.clock.now })
    }

    @Test("Present with vsyncId shows at that timeline's presentation time; no hitch when on time")
    func presentAimed() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 3)
        try harness.run(seconds: 0.05)
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        let entries = tick.timelines(sentAt: tick.timestamp)
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, vsyncID: entries[2].vsyncID, at: harness.clock.now)
        let shown = try #require(try harness.run(until: entries[2].presentationTime).flatMap(\.presentations).first)
        #expect(shown.presentedTime == entries[2].presentationTime)
        #expect(shown.expectedTime == entries[2].presentationTime)
        #expect(shown.hitch == .zero)
    }

    @Test("Present with vsyncId committed after that timeline's deadline: the hitch is measured from its presentation time")
    func presentAimedLate() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 3)
        try harness.run(seconds: 0.05)
        try harness.presentOnce(link)
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        let entries = tick.timelines(sentAt: tick.timestamp)
        // Aimed at the second timeline, committed 1 ms after its deadline: shown one vsync later.
        try harness.run(until: entries[1].deadline.advanced(by: .milliseconds(1)))
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, vsyncID: entries[1].vsyncID, at: harness.clock.now)
        let shown = try #require(try harness.run(until: entries[2].presentationTime).flatMap(\.presentations).first)
        #expect(shown.presentedTime == entries[2].presentationTime)
        #expect(shown.expectedTime == entries[1].presentationTime)
        #expect(shown.hitch == period120)
    }

    @Test("Present with a vsyncId that is none of the tick's timelines is refused, naming them")
    func presentUnknownVsync() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 3)
        try harness.run(seconds: 0.05)
        let (tick, index) = try #require(try harness.ticks(of: link, count: 1).first)
        let offered = (1...7).map { index + UInt64($0) }
        #expect(throws: CompositorError.vsyncNotOffered(link, sequence: tick.sequence, vsyncID: index, offered: offered)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, vsyncID: index, at: harness.clock.now)
        }
    }

    @Test("latency 2: a frame finished after targetTimestamp but before targetPresentationTimestamp is on time")
    func latencyTwoHitch() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 1, latency: 2)
        try harness.run(seconds: 0.05)
        try harness.presentOnce(link)
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        try harness.run(until: tick.timestamp.advanced(by: period120 * 3 / 2))
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
        let shown = try #require(try harness.run(until: tick.targetPresentationTimestamp).flatMap(\.presentations).first)
        #expect(shown.expectedTime == tick.targetPresentationTimestamp)
        #expect(shown.presentedTime == tick.targetPresentationTimestamp)
        #expect(shown.hitch == .zero)
    }

    @Test("latency 2: a frame committed at once is held until targetPresentationTimestamp, not shown at targetTimestamp")
    func latencyTwoHeld() throws {
        var harness = Harness()
        let link = try harness.registerTimed(range120, timelines: 1, latency: 2)
        try harness.run(seconds: 0.05)
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
        #expect(try harness.run(until: tick.targetTimestamp).flatMap(\.presentations).isEmpty)
        let shown = try #require(try harness.run(until: tick.targetPresentationTimestamp).flatMap(\.presentations).first)
        #expect(shown.presentedTime == tick.targetPresentationTimestamp && shown.hitch == .zero)
    }

    @Test("setFrameTiming changes the next tick's timelines and latency")
    func setFrameTiming() throws {
        var harness = Harness()
        let link = try harness.link120()
        try harness.compositor.setFrameTiming(link: link, owner: harness.owner, timelines: 4, frameLatency: 2)
        let (tick, _) = try #require(try harness.ticks(of: link, count: 1).first)
        #expect(tick.timelineCount == 4 && tick.frameLatency == 2)
        #expect(tick.timelines(sentAt: tick.timestamp).count == 4)
        #expect(tick.targetPresentationTimestamp == tick.timestamp.advanced(by: period120 * 2))
        #expect(harness.compositor.snapshot(of: link)?.configuration.timelines == 4)
    }
}

import FrameRateModel
import FrameRateTesting
import Testing

/// `Compositor.unansweredTicks` and `hasUnpausedLink`: what a virtual clock waits for.
@Suite struct UnansweredTickTests {
    @Test func aDeliveredTickIsUnansweredUntilFrameDoneOrPresent() throws {
        var harness = Harness(profile: .fixed60)
        #expect(harness.compositor.unansweredTicks.isEmpty && !harness.compositor.hasUnpausedLink)
        let first = try harness.register(60, 60, 60).link
        let second = try harness.register(60, 60, 60).link
        // Registered, no tick yet: nothing to wait for, but links tick.
        #expect(harness.compositor.unansweredTicks.isEmpty && harness.compositor.hasUnpausedLink)

        let ticks = try harness.run(seconds: 1.0 / 60).flatMap(\.ticks)
        #expect(ticks.map(\.link) == [first, second])
        #expect(harness.compositor.unansweredTicks == [UnansweredTick(link: first, interval: 1), UnansweredTick(link: second, interval: 1)])

        try harness.compositor.frameDone(link: first, owner: harness.owner, sequence: 1)
        #expect(harness.compositor.unansweredTicks == [UnansweredTick(link: second, interval: 1)])
        _ = try harness.compositor.present(link: second, owner: harness.owner, sequence: 1, notBefore: nil, minimumInterval: nil, at: harness.clock.now)
        #expect(harness.compositor.unansweredTicks.isEmpty)
    }

    @Test func aBusyLinksSkippedIntervalIsANewIntervalToWaitFor() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        try harness.run(seconds: 1.0 / 60)
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: 1)
        try harness.run(seconds: 1.0 / 60)
        #expect(harness.compositor.unansweredTicks == [UnansweredTick(link: link, interval: 2)])
        // Still busy with tick 2 at the next vsync: the interval is skipped, the wait is for interval 3.
        let reports = try harness.run(seconds: 1.0 / 60)
        #expect(reports.flatMap(\.ticks).isEmpty)
        #expect(harness.compositor.unansweredTicks == [UnansweredTick(link: link, interval: 3)])
    }

    @Test("a link whose frame is unfinished while its intervals pass says which frame it awaits, since when, and how many intervals passed")
    func theAwaitedFrameIsShown() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        let period = Duration.nanoseconds(16_666_667)
        try harness.run(seconds: 1.0 / 60)
        #expect(harness.compositor.snapshot(of: link)?.awaitedFrame == nil, "a link that never answered is never held back")
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: 1)
        let second = try #require(try harness.run(seconds: 1.0 / 60).flatMap(\.ticks).first)
        #expect(second.sequence == 2)
        // Being worked on, with no interval lost yet, is not waiting.
        #expect(harness.compositor.snapshot(of: link)?.awaitedFrame == nil)

        let skipped = try harness.run(seconds: 3.0 / 60)
        #expect(skipped.flatMap(\.ticks).isEmpty)
        let awaited = try #require(harness.compositor.snapshot(of: link)?.awaitedFrame)
        #expect(awaited.sequence == 2 && awaited.skippedIntervals == 3)
        // Tick 2's vsync, two periods after the display's start, exactly as the tick said.
        let tickTime = harness.compositor.start.duration(to: second.timestamp)
        #expect(awaited.tickTime == tickTime)
        #expect(abs((tickTime - period * 2) / .nanoseconds(1)) <= 2)

        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: 2)
        #expect(harness.compositor.snapshot(of: link)?.awaitedFrame == nil)
        let resumedReports = try harness.run(seconds: 1.0 / 60)
        let resumed = try #require(resumedReports.flatMap(\.ticks).first)
        #expect(resumed.skipped == 3)
        #expect(resumedReports.allSatisfy { $0.resumed.isEmpty }, "a wait too short to be reported ends unreported")
        // A paused link awaits nothing.
        try harness.run(seconds: 2.0 / 60)
        #expect(harness.compositor.snapshot(of: link)?.awaitedFrame != nil)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: nil, paused: true, adaptive: nil, at: harness.clock.now)
        #expect(harness.compositor.snapshot(of: link)?.awaitedFrame == nil)
    }

    @Test("a link held back for 1 s is reported once per wait, at the first skipped vsync 1 s after its tick")
    func aLongWaitIsReportedOncePerWait() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        // Never answering: never held back, never reported.
        var reports = try harness.run(seconds: 2)
        #expect(reports.allSatisfy { $0.heldBack.isEmpty })
        let last = try #require(reports.flatMap(\.ticks).last)
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: last.sequence)
        let unanswered = try #require(try harness.run(seconds: 1.0 / 60).flatMap(\.ticks).last)

        reports = try harness.run(seconds: 3)
        let held = reports.filter { !$0.heldBack.isEmpty }
        #expect(held.count == 1, "once per wait")
        let first = try #require(held.first)
        #expect(first.heldBack.map(\.link) == [link] && first.heldBack[0].owner == harness.owner)
        #expect(first.heldBack[0].frame.sequence == unanswered.sequence)
        // The first vsync at least 1 s after the unanswered tick's.
        let waited = unanswered.timestamp.duration(to: first.vsync)
        #expect(waited >= .seconds(1) && waited < .seconds(1) + .milliseconds(17))
        // 60 periods of 1/60 s come to 1 s give or take the grid's nanosecond rounding.
        #expect((60...61).contains(first.heldBack[0].frame.skippedIntervals))

        #expect(reports.allSatisfy { $0.resumed.isEmpty }, "still waiting")

        // Answered: the next vsync of the link's ticks it, and reports the end of the wait
        // once, with the tick's sequence and the time since the unanswered tick, exactly.
        // Then unanswered again: a new wait, reported again.
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: unanswered.sequence)
        let again = try harness.run(seconds: 1.5)
        let resumedTick = try #require(again.flatMap(\.ticks).first)
        #expect(again.flatMap(\.ticks).count == 1)
        let ends = again.filter { !$0.resumed.isEmpty }
        #expect(ends.count == 1 && ends.first?.vsync == resumedTick.timestamp)
        let end = try #require(ends.first?.resumed.first)
        #expect(ends.first?.resumed.count == 1 && end.link == link && end.owner == harness.owner && end.sequence == resumedTick.sequence)
        #expect(end.awaited == unanswered.sequence)
        #expect(end.waited == unanswered.timestamp.duration(to: resumedTick.timestamp))
        #expect(again.flatMap(\.heldBack).count == 1)
    }

    @Test func aPausedLinkIsNeitherWaitedForNorTicking() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        try harness.run(seconds: 1.0 / 60)
        #expect(harness.compositor.unansweredTicks.count == 1)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: nil, paused: true, adaptive: nil, at: harness.clock.now)
        #expect(harness.compositor.unansweredTicks.isEmpty && !harness.compositor.hasUnpausedLink)
    }
}

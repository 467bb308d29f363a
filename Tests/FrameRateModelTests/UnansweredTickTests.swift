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

    @Test func aPausedLinkIsNeitherWaitedForNorTicking() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        try harness.run(seconds: 1.0 / 60)
        #expect(harness.compositor.unansweredTicks.count == 1)
        _ = try harness.compositor.update(link: link, owner: harness.owner, range: nil, paused: true, adaptive: nil, at: harness.clock.now)
        #expect(harness.compositor.unansweredTicks.isEmpty && !harness.compositor.hasUnpausedLink)
    }
}

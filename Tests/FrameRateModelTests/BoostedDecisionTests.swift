import FrameRateModel
import FrameRateTesting
import Testing

/// The decision says when a boost holds the rate (issue 13 §1), and a link's snapshot
/// says until when it is boosted; stepped clock, exact times.
@Suite("Boosted decision")
struct BoostedDecisionTests {
    @Test("decision.boosted while a boosted link holds the rate, not before, not after; boostedUntil is the boost's end")
    func boostedWhileHeld() throws {
        var harness = Harness()
        let link = try harness.register(10, 120, 60, entitled: true, label: "list").link
        try harness.run(seconds: 0.1)
        #expect(try !harness.compositor.decision().boosted)
        #expect(harness.compositor.snapshot(of: link)?.boostedUntil == nil)
        let at = harness.clock.now
        let (status, until) = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(300), at: at)
        #expect(status.decision.boosted && status.decision.deciders == [link])
        #expect(try harness.compositor.decision().boosted)
        let snapshot = try #require(harness.compositor.snapshot(of: link))
        #expect(harness.compositor.instant(sinceStart: try #require(snapshot.boostedUntil)) == until)
        try harness.run(seconds: 0.2)
        #expect(try harness.compositor.decision().boosted)
        // At the end the link votes its own range again: the decision is no longer boosted.
        try harness.run(seconds: 0.15)
        #expect(try !harness.compositor.decision().boosted)
        #expect(harness.compositor.snapshot(of: link)?.boostedUntil == nil)
    }

    @Test("a boost that does not hold the rate (another link holds it higher) is not boosted")
    func boostNotHolding() throws {
        var harness = Harness()
        let high = try harness.register(120, 120, 120, entitled: true).link
        let low = try harness.register(10, 60, 30, entitled: true).link
        try harness.run(seconds: 0.1)
        _ = try harness.compositor.boost(link: low, owner: harness.owner, duration: .milliseconds(300), at: harness.clock.now)
        let decision = try harness.compositor.decision()
        #expect(decision.rate == 120 && decision.deciders == [high])
        #expect(!decision.boosted)
    }

    @Test("a link's snapshot says whether it is adaptive")
    func adaptiveInSnapshot() throws {
        var harness = Harness()
        let link = try harness.register(10, 120, 60, entitled: true).link
        _ = try harness.compositor.update(link: link, owner: harness.owner, adaptive: true, at: harness.clock.now)
        #expect(harness.compositor.snapshot(of: link)?.configuration.isAdaptive == true)
    }
}

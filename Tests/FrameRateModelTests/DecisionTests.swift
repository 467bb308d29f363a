import FrameRateModel
import FrameRateTesting
import Foundation
import Testing

/// The structured decision: its fields, where the model exposes it, and its bounds.
@Suite("Structured decisions")
struct DecisionTests {
    @Test("a pending increase is due at the next vsync, and happens there")
    func pendingIncrease() throws {
        var harness = Harness()
        try harness.run(seconds: 0.1)
        let status = try harness.register(80, 120, 120, entitled: true)
        let pending = try #require(status.decision.pending)
        #expect(pending.rate == 120)
        let due = harness.compositor.instant(sinceStart: pending.at)
        #expect(due == (try harness.compositor.nextVsync(of: harness.display)))
        let change = try #require(try harness.run(seconds: 0.1).first { $0.rateChange != nil })
        #expect(change.vsync == due)
        #expect(try harness.compositor.decision().pending == nil)
    }

    @Test("a pending decrease or idle drop is due at the first vsync after its deadline, and happens there")
    func pendingDecrease() throws {
        for idle in [false, true] {
            var harness = Harness()
            let link = try harness.register(80, 120, 120, entitled: true).link
            try harness.run(seconds: 0.5)
            let changedAt = harness.clock.now
            if idle {
                try harness.compositor.invalidate(link: link, owner: harness.owner, at: changedAt)
            } else {
                _ = try harness.compositor.update(link: link, owner: harness.owner, range: try FrameRateRange(minimum: 30, maximum: 30, preferred: 30), at: changedAt)
            }
            let decision = try harness.compositor.decision()
            #expect(decision.rule == (idle ? .idle : .exact))
            let pending = try #require(decision.pending)
            #expect(pending.rate == (idle ? 10 : 30))
            let due = harness.compositor.instant(sinceStart: pending.at)
            let deadline = changedAt.advanced(by: idle ? .milliseconds(1250) : .milliseconds(250))
            #expect(due >= deadline)
            #expect(due < deadline.advanced(by: .seconds(1.0 / 120)))
            #expect(harness.compositor.snapshot[0].decision == decision)
            let reports = try harness.run(seconds: 2)
            let change = try #require(reports.first { $0.rateChange != nil })
            #expect(change.vsync == due, "idle: \(idle)")
        }
    }

    @Test("a rate change carries the decision that took effect, without a pending change")
    func changeCarriesDecision() throws {
        var harness = Harness()
        let status = try harness.register(80, 120, 120, entitled: true, label: "scroll")
        let change = try #require(try harness.run(seconds: 0.1).compactMap(\.rateChange).first)
        #expect(change.decision.rate == 120)
        #expect(change.decision.rule == .exact)
        #expect(change.decision.deciders == [status.link])
        #expect(change.decision.pending == nil)
        #expect(change.reason == change.decision.reason)
        #expect(change.decision.reason == "120 Hz is the lowest rate that serves every link exactly; link 1 'scroll' (80, 120, 120) holds it there")
    }

    @Test("Register and Update say whether and why the link itself is limited")
    func linkStatusLimit() throws {
        var harness = Harness()
        let plain = try harness.register(80, 120, 120)
        #expect(plain.limitedBy == .entitlement)
        #expect(plain.wanted == 120)
        #expect(plain.limit == LinkLimit(link: plain.link, by: .entitlement, wanted: 120, got: 60))
        #expect(plain.decision.limited == [plain.limit!])
        // Without a preferred rate, what it asked for is its maximum.
        let monitor = try harness.register(10, 100, 0)
        #expect(monitor.limit == LinkLimit(link: monitor.link, by: .entitlement, wanted: 100, got: 60))
        let fitting = try harness.register(30, 60, 60)
        #expect(fitting.limitedBy == nil)
        #expect(fitting.wanted == nil)
        // A range above 60 Hz whose preferred rate fits is clamped but not limited.
        let clampedOnly = try harness.register(30, 120, 60)
        #expect(clampedOnly.limit == nil)
        #expect(clampedOnly.decision.limitedCount == 2)

        var capped = Harness(caps: DisplayCaps(lowPowerMode: true))
        let entitled = try capped.register(80, 120, 120, entitled: true)
        #expect(entitled.limit == LinkLimit(link: entitled.link, by: .cap, wanted: 120, got: 60))
        #expect(entitled.decision.cap?.kind == .lowPower)
        #expect(entitled.decision.cap?.rate == 60)
        // At 60 Hz both the entitlement and the cap apply: the entitlement is named, as it stays when the cap goes.
        let unentitled = try capped.register(80, 120, 120)
        #expect(unentitled.limitedBy == .entitlement)
        let updated = try capped.compositor.update(link: entitled.link, owner: capped.owner, range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 60), at: capped.clock.now)
        #expect(updated.limitedBy == nil)
        #expect(capped.compositor.snapshot[0].links.map(\.limit?.by) == [nil, .entitlement])
    }

    @Test("each cap source is named by its wire name; ties name the first of lowPower, limitFrameRate, thermal")
    func capSources() {
        #expect(DisplayCaps(lowPowerMode: true).effectiveCap(configuredMaximum: nil)?.kind == .lowPower)
        #expect(DisplayCaps(limitFrameRate: true).effectiveCap(configuredMaximum: nil)?.kind == .limitFrameRate)
        #expect(DisplayCaps(thermalState: .serious).effectiveCap(configuredMaximum: nil)?.kind == .thermal)
        #expect(DisplayCaps().effectiveCap(configuredMaximum: 80)?.kind == .maxRefreshRate)
        #expect(DisplayCaps(limitFrameRate: true, thermalState: .critical).effectiveCap(configuredMaximum: 60)?.kind == .limitFrameRate)
        #expect(DisplayCaps(thermalState: .critical).effectiveCap(configuredMaximum: 48)?.kind == .maxRefreshRate)
        #expect(CapSource.allCases.map(\.rawValue) == ["lowPower", "limitFrameRate", "thermal", "maxRefreshRate"])
        #expect(LimitReason.allCases.map(\.rawValue) == ["entitlement", "cap", "overrun", "velocity"])
    }

    @Test("the configured maximum holds the display below the entitled link's rate")
    func configuredMaximumDecides() throws {
        var harness = Harness(configuredMaximum: 80)
        let status = try harness.register(80, 120, 120, entitled: true)
        #expect(status.refreshRate == 80)
        #expect(status.decision.rule == .cap)
        #expect(status.decision.cap?.kind == .maxRefreshRate)
        #expect(status.limit == LinkLimit(link: status.link, by: .cap, wanted: 120, got: 80))
        #expect(status.decision.reason == "the configured maximum caps the display at 80 Hz; link 1 (80, 120, 120) wants 120 Hz")
    }

    @Test("a link the cap limits without pulling above it leaves the rule to the links")
    func capThatDoesNotDecide() throws {
        var harness = Harness(caps: DisplayCaps(lowPowerMode: true))
        let holder = try harness.register(60, 60, 60, entitled: true)
        // (30, 120, 0) is limited (it asked for up to 120 Hz) but only pulls the display to 30 Hz.
        let monitor = try harness.register(30, 120, 0, entitled: true)
        let decision = try harness.compositor.decision()
        #expect(decision.rate == 60)
        #expect(decision.rule == .exact)
        #expect(decision.deciders == [holder.link])
        #expect(decision.limited == [LinkLimit(link: monitor.link, by: .cap, wanted: 120, got: 60)])
    }

    @Test("the deciders of the exact rule are the links that alone keep a lower rate out, or together the next lower one")
    func exactDeciders() throws {
        let arbiter = Arbiter(profile: .promotionPhone)
        func vote(_ id: UInt64, _ range: (Double, Double, Double)) throws -> LinkVote {
            LinkVote(link: LinkID(rawValue: id), range: try FrameRateRange(minimum: range.0, maximum: range.1, preferred: range.2), hasHighFrameRateEntitlement: true)
        }
        // 24 and 30 Hz need 120 Hz together; each alone is served by a lower rate, and each alone keeps one out.
        let pair = arbiter.decide(votes: [try vote(1, (24, 24, 24)), try vote(2, (30, 30, 30))], caps: DisplayCaps())
        #expect(pair.rate == 120)
        #expect(pair.deciders == [LinkID(rawValue: 1), LinkID(rawValue: 2)])
        // 24, 30 and 40 Hz: every lower rate misses at least two of them, so none holds it alone.
        let trio = arbiter.decide(votes: [try vote(1, (24, 24, 24)), try vote(2, (30, 30, 30)), try vote(3, (40, 40, 40))], caps: DisplayCaps())
        #expect(trio.rate == 120)
        #expect(trio.deciders == [LinkID(rawValue: 1), LinkID(rawValue: 2)], "80 Hz misses 24 and 30 Hz")
        // At the lowest rate nothing holds the display up.
        let floor = arbiter.decide(votes: [try vote(1, (8, 15, 0))], caps: DisplayCaps())
        #expect(floor.rate == 10)
        #expect(floor.deciders.isEmpty)
        #expect(floor.reason == "10 Hz, the lowest rate allowed, serves every link exactly")
    }

    @Test("the lists are bounded, lowest link ids first, with the totals", arguments: [false, true])
    func boundedLists(reversed: Bool) throws {
        var votes = try (1...40).map { id in
            LinkVote(link: LinkID(rawValue: UInt64(id)), range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: false)
        }
        if reversed { votes.reverse() }
        let decision = Arbiter(profile: .promotionPhone).decide(votes: votes, caps: DisplayCaps())
        let first16 = (1...16).map { LinkID(rawValue: UInt64($0)) }
        #expect(decision.rate == 60)
        #expect(decision.deciders == first16)
        #expect(decision.deciderCount == 40)
        #expect(decision.limited.map(\.link) == first16)
        #expect(decision.limitedCount == 40)
        #expect(decision.reason == "60 Hz is the lowest rate that serves every link exactly; link 1 (80, 120, 120) and 39 more hold it there; "
            + "it is limited to 60 Hz without the high-frame-rate entitlement (39 more links are limited)")
    }

    @Test("a link's since is the instant it was registered at")
    func registrationTime() throws {
        var harness = Harness()
        try harness.run(seconds: 0.3)
        let first = try harness.register(30, 60, 60)
        let firstAt = harness.clock.now
        try harness.run(seconds: 1.7)
        let second = try harness.register(30, 60, 60)
        let snapshots = harness.compositor.snapshot[0].links
        #expect(snapshots.map(\.link) == [first.link, second.link])
        #expect(harness.compositor.instant(sinceStart: snapshots[0].since) == firstAt)
        #expect(harness.compositor.instant(sinceStart: snapshots[1].since) == harness.clock.now)
        #expect(harness.compositor.snapshot(of: second.link)?.since == .seconds(2))
    }

    @Test("every rule's wire name is a step of the ladder in docs/arbitration.md")
    func rulesAreDocumented() throws {
        #expect(ArbitrationRule.allCases.map(\.rawValue) == ["cap", "exact", "priority", "preferred", "most-served", "idle"])
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/arbitration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for (step, rule) in ArbitrationRule.allCases.enumerated() {
            #expect(text.contains("### \(step + 1). "), "step \(step + 1)")
            let heading = text.split(separator: "\n").first { $0.hasPrefix("### \(step + 1). ") }
            #expect(heading?.contains("(`\(rule.rawValue)`)") == true, "step \(step + 1) is not tied to `\(rule.rawValue)`: \(heading ?? "")")
        }
    }
}

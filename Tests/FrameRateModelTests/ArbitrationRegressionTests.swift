import FrameRateModel
import FrameRateTesting
import Testing

/// One regression test per bug of issue 11 §1; each failed before its fix.
@Suite("Arbitration regressions (issue 11)")
struct ArbitrationRegressionTests {
    @Test("1. an idle deadline does not leak into a later decrease: it waits only the 250 ms dwell")
    func idleDeadlineDoesNotLeak() throws {
        var harness = Harness()
        let fast = try harness.register(80, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 120)
        try harness.compositor.invalidate(link: fast.link, owner: harness.owner, at: harness.clock.now)
        try harness.run(seconds: 0.05)
        let registeredAt = harness.clock.now
        try harness.register(30, 60, 60)
        let reports = try harness.run(seconds: 2)
        let change = try #require(reports.first { $0.rateChange != nil })
        #expect(change.rateChange?.to == 60)
        let waited = registeredAt.duration(to: change.vsync)
        #expect(waited >= .milliseconds(250))
        #expect(waited <= .milliseconds(250) + .seconds(1.0 / 120) + .nanoseconds(1), "waited \(waited)")
    }

    @Test("1. once the idle timeout has passed, a later decrease keeps the wish already running")
    func idleWishCarriesOverAfterTheTimeout() throws {
        var harness = Harness()
        let fast = try harness.register(80, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        let releasedAt = harness.clock.now
        try harness.compositor.invalidate(link: fast.link, owner: harness.owner, at: releasedAt)
        // Past the idle timeout, inside the dwell: the display has wanted a lower rate since releasedAt + 1 s.
        try harness.run(seconds: 1.1)
        #expect(harness.refreshRate == 120)
        try harness.register(30, 60, 60)
        let change = try #require(try harness.run(seconds: 1).first { $0.rateChange != nil })
        #expect(change.rateChange?.to == 60)
        let waited = releasedAt.duration(to: change.vsync)
        #expect(waited >= .milliseconds(1250))
        #expect(waited <= .milliseconds(1250) + .seconds(1.0 / 120) + .nanoseconds(1), "waited \(waited)")
    }

    @Test("2. a custom profile that needs the entitlement must have a rate at or below 60 Hz")
    func customProfileKeepsTheEntitlementRule() throws {
        #expect(throws: DisplayProfileError.self) { try DisplayProfile.named("custom:144,120:entitlement") }
        #expect(throws: DisplayProfileError.self) {
            try DisplayProfile(name: "x", supportedRates: [90, 72], requiresEntitlementAbove60Hz: true)
        }
        // Without the suffix the same rates are fine; with one rate at or below 60 Hz too.
        _ = try DisplayProfile.named("custom:144,120")
        let profile = try DisplayProfile.named("custom:144,120,48:entitlement")
        var harness = Harness(profile: profile)
        try harness.register(30, 60, 60)
        try harness.run(seconds: 2)
        #expect(harness.refreshRate == 48)
        #expect(!harness.compositor.snapshot[0].reason.contains("0 Hz, below"))
    }

    @Test("2. a cap below every supported rate is named, never '0 Hz'")
    func capBelowEveryRateNamesTheCap() throws {
        let profile = try DisplayProfile.named("custom:144,120")
        let decision = Arbiter(profile: profile).decide(
            votes: [LinkVote(link: LinkID(rawValue: 1), range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 60), hasHighFrameRateEntitlement: false)],
            caps: DisplayCaps(lowPowerMode: true)
        )
        #expect(decision.refreshRate == 120)
        #expect(decision.reason.contains("Low Power Mode"))
        #expect(!decision.reason.contains(" 0 Hz"))
    }

    @Test("3. a link never ticks above its entitlement, not even during a decrease dwell")
    func noTickAboveTheEntitlementDuringTheDwell() throws {
        var harness = Harness()
        let holder = try harness.register(80, 80, 80, entitled: true)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 80)
        try harness.compositor.invalidate(link: holder.link, owner: harness.owner, at: harness.clock.now)
        let status = try harness.register(80, 120, 120)
        #expect(status.refreshRate == 60)
        #expect(status.callbackRate == 60)
        let ticks = try harness.run(seconds: 1.2).flatMap(\.ticks).filter { $0.link == status.link }
        #expect(ticks.contains { $0.refreshRate == 80 }, "the dwell kept the display at 80 Hz for a while")
        #expect(ticks.allSatisfy { $0.callbackRate <= 60 }, "\(Set(ticks.map(\.callbackRate)))")
        let tooClose = zip(ticks, ticks.dropFirst()).filter { $0.timestamp.duration(to: $1.timestamp) < .seconds(1.0 / 60) - .nanoseconds(1) }
        #expect(tooClose.isEmpty, "\(tooClose.count) ticks less than 1/60 s apart")
        #expect(harness.refreshRate == 60)
    }

    @Test("3. a link never ticks above a cap turned on during a decrease dwell")
    func noTickAboveACapDuringTheDwell() throws {
        var harness = Harness()
        let status = try harness.register(80, 80, 80, entitled: true)
        try harness.run(seconds: 0.5)
        _ = try harness.compositor.setCaps(display: nil, at: harness.clock.now) { $0.lowPowerMode = true }
        let ticks = try harness.run(seconds: 1).flatMap(\.ticks).filter { $0.link == status.link }
        #expect(ticks.contains { $0.refreshRate == 80 })
        #expect(ticks.allSatisfy { $0.callbackRate <= 60 }, "\(Set(ticks.map(\.callbackRate)))")
    }

    @Test("4. the reason names the link that holds the rate, not another one")
    func reasonNamesTheHolder() throws {
        let decision = Arbiter(profile: .promotionPhone).decide(
            votes: [
                LinkVote(link: LinkID(rawValue: 1), range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 0), hasHighFrameRateEntitlement: false),
                LinkVote(link: LinkID(rawValue: 3), range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: true),
            ],
            caps: DisplayCaps()
        )
        #expect(decision.refreshRate == 120)
        #expect(decision.reason.contains("link 3 (80, 120, 120) holds it there"), "\(decision.reason)")
        #expect(!decision.reason.contains("serve link 1"), "\(decision.reason)")
        #expect(decision.deciders == [LinkID(rawValue: 3)])
        // Link 1 is named, but only for what limits it.
        #expect(decision.limited == [LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60)])
    }

    @Test("5. under a cap the reason says the cap decided, and which cap")
    func capReasonDoesNotContradictItself() throws {
        for caps in [DisplayCaps(thermalState: .critical), DisplayCaps(lowPowerMode: true)] {
            let decision = Arbiter(profile: .promotionPhone).decide(
                votes: [LinkVote(link: LinkID(rawValue: 1), range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: true)],
                caps: caps
            )
            #expect(decision.refreshRate == 60)
            #expect(!decision.reason.contains("serves every link exactly"), "\(decision.reason)")
            let name = caps.lowPowerMode ? "Low Power Mode" : "thermal state critical"
            #expect(decision.reason.hasPrefix("\(name) caps the display at 60 Hz"), "\(decision.reason)")
            #expect(decision.rule == .cap)
            #expect(decision.deciders.isEmpty)
            #expect(decision.limited == [LinkLimit(link: LinkID(rawValue: 1), by: .cap, wanted: 120, got: 60)])
        }
    }

    @Test("6. thermal critical caps at 60 Hz, as the display-performance guide maps it")
    func thermalCriticalFollowsTheGuide() {
        #expect(ThermalState.serious.refreshRateCap == 60)
        #expect(ThermalState.critical.refreshRateCap == 60)
        #expect(DisplayCaps(thermalState: .critical).effectiveCap(configuredMaximum: nil)?.rate == 60)
    }
}

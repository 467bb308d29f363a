import FrameRateModel
import FrameRateTesting
import Testing

/// The panel rate following content velocity (issue 13 §2) on a stepped clock: the
/// tables' thresholds, the reference table (100, 200, 400 pt/s → 60, 80, 120 Hz on the
/// panel while callbacks stay at 120), a report's expiry, the decrease dwell, the
/// decision's velocity entries and residency. No test here sleeps.
@Suite("Content velocity")
struct ContentVelocityTests {
    /// One 120 Hz grid period.
    static let period = Duration.seconds(1.0 / 120)

    @Test("the phone table: at rest 10 Hz, (0, 160] → 60, (160, 320] → 80, above 320 → 120")
    func phoneThresholds() {
        let table = ContentVelocityTable.phone
        let cases: [(Double, Double)] = [
            (0, 10), (0.001, 60), (100, 60), (160, 60), (160.5, 80), (161, 80), (200, 80), (320, 80), (320.01, 120),
            (321, 120), (400, 120), (1e9, 120),
        ]
        for (velocity, rate) in cases { #expect(table.rate(for: velocity) == rate, "\(velocity) pt/s") }
        #expect(DisplayProfile.promotionPhone.velocityTable == .phone)
    }

    @Test("the pad table uses its own rates; fixed and custom profiles have none")
    func otherProfiles() throws {
        let table = ContentVelocityTable.pad
        let cases: [(Double, Double)] = [(0, 24), (1, 60), (160, 60), (160.5, 120), (400, 120)]
        for (velocity, rate) in cases { #expect(table.rate(for: velocity) == rate, "\(velocity) pt/s") }
        #expect(DisplayProfile.promotionPad.velocityTable == .pad)
        #expect(DisplayProfile.fixed60.velocityTable == nil)
        #expect(try DisplayProfile.named("custom:144,72").velocityTable == nil)
        #expect(try DisplayProfile.named("promotion-phone").velocityTable == .phone)
    }

    @Test("reference table: phone, entitlement, 100/200/400 pt/s → panel 60/80/120, callbacks stay at 120", arguments: [
        (100.0, 60.0), (200.0, 80.0), (400.0, 120.0),
    ])
    func referenceTable(velocity: Double, panel: Double) throws {
        for range in [(120.0, 120.0, 120.0), (80.0, 120.0, 120.0)] {
            var harness = Harness()
            let link = try harness.register(range.0, range.1, range.2, entitled: true, label: "anim").link
            try harness.run(seconds: 0.1)
            #expect(harness.refreshRate == 120)
            let reports = try harness.runReporting(link, velocity: velocity, seconds: 1)
            #expect(try harness.compositor.panelRate() == panel, "\(range) at \(velocity) pt/s")
            #expect(harness.refreshRate == 120)
            #expect(harness.callbackRates == [120])
            // The last 0.5 s (past the 250 ms dwell): every tick says panel `panel`, callbacks 120,
            // duration the panel's period, and targetTimestamp one grid period after timestamp.
            let late = reports.suffix(60).flatMap(\.ticks)
            #expect(late.count == 60)
            for tick in late {
                #expect(tick.refreshRate == panel && tick.callbackRate == 120)
                #expect(tick.duration == VsyncTimeline<ManualClock.Instant>.period(of: panel))
                #expect(tick.timestamp.duration(to: tick.targetTimestamp) == Self.period)
            }
            let decision = try #require(try harness.compositor.panelDecision())
            #expect(decision.rate == panel)
            // The grid decision is the link's ordinary vote.
            #expect(try harness.compositor.decision().rate == 120)
        }
    }

    @Test("the panel decision lists the velocity that decided; the reason names it")
    func decisionEntry() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true, label: "list").link
        try harness.run(seconds: 0.1)
        #expect(try harness.compositor.panelDecision() == nil)
        try harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 200, at: harness.clock.now)
        let decision = try #require(try harness.compositor.panelDecision())
        #expect(decision.rate == 80)
        let limit = try #require(decision.limit(of: link))
        #expect(limit.by == .velocity && limit.wanted == 120 && limit.got == 80 && limit.contentVelocity == 200)
        #expect(decision.reason.contains("200 pt/s"))
        // Pending: the decrease waits for the dwell.
        #expect(decision.pending?.rate == 80)
        // The grid decision does not list it.
        #expect(try harness.compositor.decision().limited.isEmpty)
        // The display's snapshot carries both.
        let snapshot = harness.compositor.snapshot[0]
        #expect(snapshot.panelDecision?.rate == 80 && snapshot.panelRate == 120 && snapshot.refreshRate == 120)
    }

    @Test("a lower panel rate waits for the decrease dwell; a higher one comes at the next vsync")
    func dwell() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true).link
        try harness.runReporting(link, velocity: 400, seconds: 0.5)
        #expect(try harness.compositor.panelRate() == 120)
        let slowed = harness.clock.now
        var reports = try harness.runReporting(link, velocity: 100, seconds: 0.5)
        let drop = try #require(reports.first { $0.panelChange?.to == 60 })
        let deadline = slowed.advanced(by: .milliseconds(250))
        #expect(drop.vsync >= deadline.advanced(by: .nanoseconds(-1)) && drop.vsync < deadline.advanced(by: Self.period))
        // Before the drop every tick still says 120; the grid never moved.
        #expect(reports.filter { $0.vsync < drop.vsync }.flatMap(\.ticks).allSatisfy { $0.refreshRate == 120 })
        #expect(reports.allSatisfy { $0.rateChange == nil })
        // Faster content: the panel is back at 120 at the very next vsync.
        let faster = harness.clock.now
        reports = try harness.runReporting(link, velocity: 400, seconds: 0.1)
        let rise = try #require(reports.first)
        #expect(rise.panelChange?.to == 120)
        #expect(rise.vsync > faster && rise.vsync <= faster.advanced(by: Self.period))
    }

    @Test("a report expires 0.5 s after it was made: the link then votes its own range again")
    func expiry() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true).link
        try harness.run(seconds: 0.1)
        let reported = harness.clock.now
        try harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 100, at: reported)
        // The driver wakes for the expiry even with nothing else due.
        let reports = try harness.runEventful(seconds: 1)
        let drop = try #require(reports.first { $0.panelChange?.to == 60 })
        #expect(drop.vsync >= reported.advanced(by: .milliseconds(250) - .nanoseconds(1)))
        let expires = reported.advanced(by: .milliseconds(500))
        let rise = try #require(reports.first { $0.panelChange?.to == 120 })
        #expect(rise.vsync >= expires.advanced(by: .nanoseconds(-1)) && rise.vsync < expires.advanced(by: Self.period))
        #expect(harness.compositor.contentVelocity(of: link) == nil)
        #expect(try harness.compositor.panelDecision() == nil)
        // Until the expiry the panel stayed at 60 Hz.
        #expect(reports.filter { $0.vsync >= drop.vsync && $0.vsync < rise.vsync }.flatMap(\.ticks).allSatisfy { $0.refreshRate == 60 })
    }

    @Test("the driver's next eventful vsync includes a report's expiry")
    func nextEventfulIncludesExpiry() throws {
        var harness = Harness()
        // A paused link ticks never: only the expiry of its report is an event.
        let link = try harness.register(120, 120, 120, entitled: true, paused: true).link
        try harness.runEventful(seconds: 2)
        #expect(try harness.compositor.nextEventfulVsync(of: harness.display) == nil)
        let at = harness.clock.now
        try harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 100, at: at)
        let next = try #require(try harness.compositor.nextEventfulVsync(of: harness.display))
        let expires = at.advanced(by: .milliseconds(500))
        #expect(next >= expires.advanced(by: .nanoseconds(-1)) && next < expires.advanced(by: .seconds(1.0 / 10)))
        try harness.runEventful(seconds: 1)
        #expect(harness.compositor.contentVelocity(of: link) == nil)
        #expect(try harness.compositor.nextEventfulVsync(of: harness.display) == nil)
    }

    @Test("a newer report in the same band extends the expiry without re-arbitrating")
    func sameBand() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true).link
        try harness.run(seconds: 0.1)
        #expect(try harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 100, at: harness.clock.now))
        harness.clock.advance(by: .milliseconds(400))
        let second = harness.clock.now
        #expect(try !harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 150, at: second))
        #expect(harness.compositor.contentVelocity(of: link)?.velocity == 150)
        #expect(try harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 170, at: second))
        let report = try #require(harness.compositor.contentVelocity(of: link))
        #expect(report.rate == 80)
        #expect(harness.compositor.start.advanced(by: report.expires) == second.advanced(by: .milliseconds(500)))
    }

    @Test("content at rest (0 pt/s) votes the profile's lowest rate: the panel falls to 10 Hz, callbacks stay at 120")
    func atRest() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true).link
        let reports = try harness.runReporting(link, velocity: 0, seconds: 1)
        #expect(try harness.compositor.panelRate() == 10)
        #expect(reports.last?.ticks.first?.refreshRate == 10)
        #expect(reports.last?.ticks.first?.callbackRate == 120)
    }

    @Test("without the entitlement the velocity vote is held to 60 Hz and the panel decision says so")
    func entitlement() throws {
        var harness = Harness()
        let link = try harness.register(60, 120, 120, entitled: false).link
        try harness.runReporting(link, velocity: 400, seconds: 0.5)
        #expect(try harness.compositor.panelRate() == 60)
        let decision = try #require(try harness.compositor.panelDecision())
        #expect(decision.limit(of: link)?.by == .entitlement)
    }

    @Test("a boost holds the panel: a boosted link votes its boost range, not its velocity")
    func boostHoldsPanel() throws {
        var harness = Harness()
        let link = try harness.register(10, 120, 120, entitled: true).link
        try harness.runReporting(link, velocity: 100, seconds: 0.5)
        #expect(try harness.compositor.panelRate() == 60)
        _ = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(300), at: harness.clock.now)
        try harness.runReporting(link, velocity: 100, seconds: 0.1)
        #expect(try harness.compositor.panelRate() == 120)
        // After the boost, velocity decides again, through the dwell.
        try harness.runReporting(link, velocity: 100, seconds: 0.6)
        #expect(try harness.compositor.panelRate() == 60)
    }

    @Test("a fixed-rate profile accepts reports and ignores them")
    func fixedIgnores() throws {
        var harness = Harness(profile: .fixed60)
        let link = try harness.register(60, 60, 60).link
        try harness.run(seconds: 0.1)
        #expect(try !harness.compositor.reportContentVelocity(link: link, owner: harness.owner, velocity: 100, at: harness.clock.now))
        #expect(harness.compositor.contentVelocity(of: link) == nil)
        #expect(try harness.compositor.panelDecision() == nil)
        #expect(try harness.compositor.panelRate() == 60)
    }

    @Test("another owner's report is NOT_FOUND")
    func otherOwner() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true).link
        #expect(throws: CompositorError.linkNotFound(link)) {
            try harness.compositor.reportContentVelocity(link: link, owner: OwnerID(rawValue: 99), velocity: 100, at: harness.clock.now)
        }
    }

    @Test("residency records the panel rate, credited to the velocity link")
    func residency() throws {
        var harness = Harness()
        let link = try harness.register(120, 120, 120, entitled: true, label: "anim").link
        try harness.run(seconds: 0.1)
        let slowed = harness.clock.now
        try harness.runReporting(link, velocity: 100, seconds: 1.25)
        let entries = ResidencyTests.checkInvariants(harness)
        let at60 = ResidencyTests.time(entries, rate: 60, holder: .link(link))
        // From the drop (slowed + 250 ms, on the next vsync) to now: 1 s, less at most a period.
        #expect(at60 <= .seconds(1) && at60 >= .seconds(1) - Self.period)
        let at120 = ResidencyTests.time(entries, rate: 120, holder: .link(link))
        #expect(at120 >= .milliseconds(250) && at120 <= harness.compositor.start.duration(to: slowed) + .milliseconds(250) + Self.period)
    }

    @Test("a link without reports keeps its callbacks and ticks on the grid; the panel follows the velocity link")
    func otherLinks() throws {
        var harness = Harness()
        let animation = try harness.register(120, 120, 120, entitled: true).link
        let plain = try harness.register(30, 60, 60, entitled: true).link
        try harness.runReporting(animation, velocity: 200, seconds: 0.5)
        #expect(try harness.compositor.panelRate() == 80)
        #expect(harness.refreshRate == 120)
        let snapshot = harness.compositor.snapshot[0]
        #expect(snapshot.links.first { $0.link == plain }?.callbackRate == 60)
    }
}

extension Harness {
    /// Steps vsync by vsync for `seconds`, reporting `velocity` for `link` at every one of
    /// its ticks (as a client sends `contentVelocity` with each frame), returning every report.
    @discardableResult
    mutating func runReporting(_ link: LinkID, velocity: Double, seconds: Double) throws -> [VsyncReport<ManualClock.Instant>] {
        let end = clock.now.advanced(by: .seconds(seconds))
        var reports: [VsyncReport<ManualClock.Instant>] = []
        try compositor.reportContentVelocity(link: link, owner: owner, velocity: velocity, at: clock.now)
        while true {
            let next = try compositor.nextVsync(of: display)
            guard next <= end else { break }
            clock.advance(to: next)
            let report = try compositor.vsync(of: display, at: clock.now)
            reports.append(report)
            if report.ticks.contains(where: { $0.link == link }) {
                try compositor.reportContentVelocity(link: link, owner: owner, velocity: velocity, at: clock.now)
            }
        }
        clock.advance(to: end)
        return reports
    }
}

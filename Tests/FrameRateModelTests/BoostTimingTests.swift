import FrameRateModel
import FrameRateTesting
import Testing

/// Transient boosts (`DisplayLink/Boost`) on a stepped clock: the boosted vote, the end
/// that only moves later, the expiry at its exact instant and the fall back through the
/// decrease dwell. No test here sleeps.
@Suite("Boost timing")
struct BoostTimingTests {
    /// A phone with one entitled link preferring 60 Hz (range 10-120), running at 60 Hz.
    static func harness() throws -> (Harness, LinkID) {
        var harness = Harness()
        let status = try harness.register(10, 120, 60, entitled: true, label: "list")
        try harness.run(seconds: 0.1)
        #expect(harness.refreshRate == 60)
        return (harness, status.link)
    }

    @Test("a boost votes {max, max, max}, its ticks say boosted, and the decision names it")
    func boostRaisesAndMarks() throws {
        var (harness, link) = try Self.harness()
        let boostedAt = harness.clock.now
        let (status, until) = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(500), at: boostedAt)
        #expect(until == boostedAt.advanced(by: .milliseconds(500)))
        #expect(status.refreshRate == 120)
        #expect(status.callbackRate == 120)
        #expect(status.decision.reason.contains("boosted"))
        #expect(status.decision.deciders == [link])
        let reports = try harness.run(seconds: 0.2)
        #expect(reports.first?.rateChange?.to == 120)
        #expect(reports.allSatisfy { $0.ticks.allSatisfy { $0.boosted && $0.callbackRate == 120 } })
    }

    @Test("the boost ends at its exact instant, then the rate falls back after the decrease dwell")
    func expiryThenDwell() throws {
        var (harness, link) = try Self.harness()
        let boostedAt = harness.clock.now
        let end = boostedAt.advanced(by: .milliseconds(500))
        _ = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(500), at: boostedAt)
        let reports = try harness.runEventful(seconds: 1.5)
        // Every tick before the end is boosted; none at or after it.
        let ticks = reports.flatMap(\.ticks)
        let slack = Duration.nanoseconds(1)
        #expect(ticks.filter { $0.timestamp < end.advanced(by: .zero - slack) }.allSatisfy { $0.boosted })
        #expect(ticks.filter { $0.timestamp >= end.advanced(by: .zero - slack) }.allSatisfy { !$0.boosted })
        #expect(ticks.contains { $0.timestamp >= end })
        // The drop to 60 Hz is at the first vsync at or after end + 250 ms, not before.
        let drop = try #require(reports.first { $0.rateChange?.to == 60 })
        let deadline = end.advanced(by: .milliseconds(250))
        #expect(drop.vsync >= deadline.advanced(by: .nanoseconds(-1)))
        #expect(drop.vsync < deadline.advanced(by: .seconds(1.0 / 120)))
        // Until the drop the display stays at 120 Hz while the link's callbacks fall back to 60.
        #expect(ticks.filter { $0.timestamp >= end && $0.timestamp < drop.vsync }.allSatisfy { $0.refreshRate == 120 && $0.callbackRate == 60 })
        #expect(harness.refreshRate == 60)
    }

    @Test("after a decrease applied at a vsync a late wake-up passed over, a boost's end falls on the new grid")
    func boostEndAfterPassedOverDecrease() throws {
        var harness = Harness()
        let holder = try harness.register(80, 120, 120, entitled: true).link
        try harness.register(10, 120, 60, entitled: true)
        // A paused link's boost changes no vote; its end is still processed at a vsync.
        let quiet = try harness.register(10, 120, 60, entitled: true, paused: true).link
        try harness.run(seconds: 0.1)
        #expect(harness.refreshRate == 120)
        _ = try harness.compositor.update(link: holder, owner: harness.owner, paused: true, at: harness.clock.now)
        let pending = try #require(harness.compositor.snapshot[0].decision.pending)
        try #require(pending.rate == 60)
        let due = harness.compositor.instant(sinceStart: pending.at)
        let newPeriod = Duration.seconds(1.0 / 60)
        while try harness.compositor.nextVsync(of: harness.display) < due {
            harness.clock.advance(to: try harness.compositor.nextVsync(of: harness.display))
            _ = try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true })
        }
        // The boost ends 1 ms after the new grid's first vsync after the change: at the 3rd
        // vsync of the old grid after it, at the 2nd of the new one.
        let end = due.advanced(by: newPeriod + .milliseconds(1))
        _ = try harness.compositor.boost(link: quiet, owner: harness.owner, duration: harness.clock.now.duration(to: end), at: harness.clock.now)
        // Wake just after the new grid's 2nd vsync: the change's vsync was passed over.
        harness.clock.advance(to: due.advanced(by: newPeriod * 2 + .microseconds(500)))
        let late = try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true })
        #expect(late.rateChange?.to == 60)
        #expect(late.vsync == due.advanced(by: newPeriod * 2))
        // The boost ended before that vsync, so it is over at it.
        #expect(harness.compositor.snapshot[0].links.first { $0.link == quiet }?.boostedUntil == nil)
    }

    @Test("with no decrease dwell, a passed-over decrease and the drop at a boost's end after it are both reported, in order")
    func twoChangesInOneLateVsync() throws {
        var harness = Harness(governor: .init(decreaseDwell: .zero))
        let holder = try harness.register(120, 120, 120, entitled: true).link
        try harness.register(10, 120, 30, entitled: true)
        let booster = try harness.register(10, 120, 30, entitled: true).link
        try harness.run(seconds: 0.1)
        try #require(harness.refreshRate == 120)
        // The booster votes {80, 80, 80} for 30 ms; the holder pauses: with no dwell, the
        // decrease to 80 Hz is due at the next vsync, and the boost's end drops to 30 Hz.
        let end = try harness.compositor.boost(
            link: booster, owner: harness.owner, duration: .milliseconds(30), range: try FrameRateRange(minimum: 80, maximum: 80, preferred: 80),
            at: harness.clock.now
        ).boostedUntil
        _ = try harness.compositor.update(link: holder, owner: harness.owner, paused: true, at: harness.clock.now)
        let pending = try #require(harness.compositor.snapshot[0].decision.pending)
        try #require(pending.rate == 80)
        let decreaseDue = harness.compositor.instant(sinceStart: pending.at)
        try #require(end > decreaseDue)
        // Wake 52 ms after that vsync: it was passed over, and the boost is over too.
        harness.clock.advance(to: decreaseDue.advanced(by: .milliseconds(52)))
        let late = try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in true })
        // The decrease took effect at its own vsync; the drop, with no dwell, at the vsync
        // processed, where the boost's end is re-arbitrated.
        #expect(late.rateChanges.map { [$0.change.from, $0.change.to] } == [[120, 80], [80, 30]])
        #expect(late.rateChanges.map(\.vsync) == [decreaseDue, late.vsync])
        #expect(late.passedOverChange?.vsync == decreaseDue)
        #expect(late.rateChange?.to == 30 && late.rateChangeVsync == nil)
        #expect(late.vsync >= end && late.vsync <= harness.clock.now)
        #expect(harness.refreshRate == 30)
    }

    @Test("the driver's next eventful vsync includes a boost's end")
    func nextEventfulIncludesEnd() throws {
        var harness = Harness()
        // A paused link's boost changes no vote, but its end is still a re-arbitration.
        let status = try harness.register(10, 120, 60, entitled: true, paused: true)
        try harness.run(seconds: 0.1)
        let at = harness.clock.now
        _ = try harness.compositor.boost(link: status.link, owner: harness.owner, duration: .milliseconds(100), at: at)
        let next = try #require(try harness.compositor.nextEventfulVsync(of: harness.display))
        // (A grid instant may fall a few attoseconds before the exact end: 1 ns of slack.)
        #expect(next >= at.advanced(by: .milliseconds(100) - .nanoseconds(1)))
        #expect(next < at.advanced(by: .milliseconds(100)).advanced(by: .seconds(1.0 / 60)))
    }

    @Test("each boost moves the end to now + duration, never earlier")
    func neverShortens() throws {
        var (harness, link) = try Self.harness()
        let start = harness.clock.now
        let first = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(500), at: start).boostedUntil
        harness.clock.advance(by: .milliseconds(100))
        let shorter = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(100), at: harness.clock.now).boostedUntil
        #expect(shorter == first)
        harness.clock.advance(by: .milliseconds(200))
        let longer = try harness.compositor.boost(link: link, owner: harness.owner, duration: .milliseconds(500), at: harness.clock.now).boostedUntil
        #expect(longer == start.advanced(by: .milliseconds(800)))
        let ticks = try harness.runEventful(seconds: 2).flatMap(\.ticks)
        let slack = Duration.nanoseconds(1)
        #expect(ticks.filter { $0.timestamp < longer.advanced(by: .zero - slack) }.allSatisfy { $0.boosted })
        #expect(ticks.filter { $0.timestamp >= longer.advanced(by: .zero - slack) }.allSatisfy { !$0.boosted })
    }

    @Test("a boost is subject to the entitlement: without it the boost gets 60 Hz, and the decision says so")
    func entitlementLimitsBoost() throws {
        var harness = Harness()
        let status = try harness.register(10, 120, 30, entitled: false)
        try harness.run(seconds: 0.1)
        let (boosted, _) = try harness.compositor.boost(link: status.link, owner: harness.owner, duration: .seconds(1), at: harness.clock.now)
        #expect(boosted.refreshRate == 60)
        #expect(boosted.limit == LinkLimit(link: status.link, by: .entitlement, wanted: 120, got: 60))
        #expect(boosted.decision.limited == [LinkLimit(link: status.link, by: .entitlement, wanted: 120, got: 60)])
    }

    @Test("an explicit boost range is voted instead of the default")
    func explicitRange() throws {
        var (harness, link) = try Self.harness()
        let range = try FrameRateRange(minimum: 80, maximum: 80, preferred: 80)
        let (status, _) = try harness.compositor.boost(link: link, owner: harness.owner, duration: .seconds(1), range: range, at: harness.clock.now)
        #expect(status.refreshRate == 80)
        #expect(status.callbackRate == 80)
    }
}

extension Harness {
    /// Steps the clock only to the vsyncs where something happens (as the daemon's
    /// tick plane does) for `seconds`, returning every report.
    @discardableResult
    mutating func runEventful(seconds: Double) throws -> [VsyncReport<ManualClock.Instant>] {
        let end = clock.now.advanced(by: .seconds(seconds))
        var reports: [VsyncReport<ManualClock.Instant>] = []
        while let next = try compositor.nextEventfulVsync(of: display), next <= end {
            clock.advance(to: next)
            reports.append(try compositor.vsync(of: display, at: clock.now))
        }
        clock.advance(to: end)
        return reports
    }
}

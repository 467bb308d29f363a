import FrameRateModel
import FrameRateTesting
import Testing

extension Harness {
    /// Processes every vsync up to and including `end`, then leaves the clock at `end`.
    @discardableResult
    mutating func run(until end: ManualClock.Instant) throws -> [VsyncReport<ManualClock.Instant>] {
        var reports: [VsyncReport<ManualClock.Instant>] = []
        while true {
            let next = try compositor.nextVsync(of: display)
            guard next <= end else { break }
            clock.advance(to: next)
            reports.append(try compositor.vsync(of: display, at: clock.now, canDeliver: { _ in true }))
        }
        clock.advance(to: end)
        return reports
    }

    /// Runs until the next tick of any link and returns it.
    mutating func nextTick() throws -> Tick<ManualClock.Instant> {
        while true {
            let next = try compositor.nextVsync(of: display)
            clock.advance(to: next)
            let report = try compositor.vsync(of: display, at: clock.now, canDeliver: { _ in true })
            if let tick = report.ticks.first { return tick }
        }
    }

    /// Presents `tick` of `link` now (as its owner), discarding what it replaced.
    mutating func present(_ tick: Tick<ManualClock.Instant>, of link: LinkID) throws {
        _ = try compositor.present(link: link, owner: owner, sequence: tick.sequence, at: clock.now)
    }

    /// With `tick` of `link` unanswered, moves one vsync on (which must tick nobody),
    /// presents it, and returns the next tick.
    mutating func presentOneVsyncLate(_ tick: Tick<ManualClock.Instant>, of link: LinkID) throws -> Tick<ManualClock.Instant> {
        clock.advance(to: try compositor.nextVsync(of: display))
        #expect(try compositor.vsync(of: display, at: clock.now).ticks.isEmpty)
        try present(tick, of: link)
        return try nextTick()
    }

    /// A 120 Hz link that has settled at 120 Hz.
    mutating func link120() throws -> LinkID {
        let status = try register(80, 120, 120, entitled: true, label: "scroller")
        try run(seconds: 0.05)
        #expect(refreshRate == 120)
        return status.link
    }
}

private let period120 = Duration.seconds(1.0 / 120)

@Suite("Present and Presented")
struct PresentationTests {
    @Test("a frame presented at once after its tick shows at its target: no hitch")
    func onTime() throws {
        var harness = Harness()
        let link = try harness.link120()
        let tick = try harness.nextTick()
        #expect(try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now).replaced == nil)
        let reports = try harness.run(until: tick.targetTimestamp)
        let shown = try #require(reports.flatMap(\.presentations).first)
        #expect(shown.presentedTime == tick.targetTimestamp)
        #expect(shown.expectedTime == tick.targetTimestamp)
        #expect(shown.hitch == .zero)
        #expect(!shown.dropped)
        let hitches = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        #expect(hitches.frames == 1 && hitches.late == 0 && hitches.dropped == 0 && hitches.hitchTime == .zero)
    }

    @Test("a 20 ms stall on a 120 Hz link shows one late frame, 25 ms after its tick: hitch 16.667 ms")
    func twentyMillisecondStall() throws {
        var harness = Harness()
        let link = try harness.link120()
        var presented: [Presentation<ManualClock.Instant>] = []
        var ticks: [Tick<ManualClock.Instant>] = []
        // The client presents each tick's frame at once, except the 11th, which it presents 20 ms late.
        var stalled: Tick<ManualClock.Instant>?
        for _ in 0..<200 where presented.count < 21 {
            let next = try harness.compositor.nextVsync(of: harness.display)
            if let tick = stalled, tick.timestamp.advanced(by: .milliseconds(20)) <= next {
                harness.clock.advance(to: tick.timestamp.advanced(by: .milliseconds(20)))
                _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
                stalled = nil
            }
            harness.clock.advance(to: next)
            let report = try harness.compositor.vsync(of: harness.display, at: harness.clock.now)
            presented += report.presentations
            guard let tick = report.ticks.first else { continue }
            ticks.append(tick)
            if ticks.count == 11 {
                stalled = tick
            } else {
                _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
            }
        }
        #expect(presented.count == 21)
        let late = presented.filter { $0.hitch > .zero }
        try #require(late.count == 1)
        let stalledTick = ticks[10]
        #expect(late[0].sequence == stalledTick.sequence)
        // The first vsync at or after tick + 20 ms is tick + 3 periods (25 ms); it was expected at tick + 1 period.
        #expect(late[0].presentedTime == stalledTick.timestamp.advanced(by: period120 * 3))
        #expect(late[0].expectedTime == stalledTick.targetTimestamp)
        #expect(late[0].hitch == period120 * 2)
        // While the frame was late, the link's two intervals were skipped (Present paces like FrameDone).
        #expect(ticks[11].skipped == 2)
        #expect(ticks[11].timestamp == late[0].presentedTime)
        let hitches = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        #expect(hitches.frames == 21)
        #expect(hitches.late == 1)
        #expect(hitches.dropped == 0)
        #expect(hitches.hitchTime == period120 * 2)
        #expect(hitches.window == .seconds(10))
    }

    @Test("present(at:) waits for the first vsync at or after at")
    func presentAt() throws {
        var harness = Harness()
        let link = try harness.link120()
        let tick = try harness.nextTick()
        let at = tick.timestamp.advanced(by: .milliseconds(30))
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, notBefore: at, at: harness.clock.now)
        // The display wakes for it even with no tick due: it is an eventful vsync.
        let shown = try #require(try harness.run(until: at.advanced(by: period120)).flatMap(\.presentations).first)
        #expect(shown.presentedTime == tick.timestamp.advanced(by: period120 * 4))
        #expect(shown.hitch == period120 * 3)
    }

    @Test("present(afterMinimumDuration:) keeps frames at least that far apart")
    func afterMinimumDuration() throws {
        var harness = Harness()
        let link = try harness.link120()
        let first = try harness.nextTick()
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: first.sequence, at: harness.clock.now)
        let reports = try harness.run(until: first.targetTimestamp)
        let one = try #require(reports.flatMap(\.presentations).first)
        let second = try #require(reports.last?.ticks.first)
        #expect(harness.clock.now == one.presentedTime)
        _ = try harness.compositor.present(
            link: link, owner: harness.owner, sequence: second.sequence, minimumInterval: .milliseconds(30), at: harness.clock.now
        )
        let two = try #require(try harness.run(until: harness.clock.now.advanced(by: .milliseconds(40))).flatMap(\.presentations).first)
        // 30 ms after the previous frame: the fourth vsync (33.3 ms).
        #expect(two.presentedTime == one.presentedTime!.advanced(by: period120 * 4))
    }

    @Test("afterMinimumDuration of exactly six periods shows at the sixth vsync, despite the grid's rounding")
    func exactMultipleOfThePeriod() throws {
        var harness = Harness()
        let link = try harness.link120()
        let first = try harness.nextTick()
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: first.sequence, at: harness.clock.now)
        let reports = try harness.run(until: first.targetTimestamp)
        let one = try #require(reports.flatMap(\.presentations).first)
        let second = try #require(reports.last?.ticks.first)
        _ = try harness.compositor.present(
            link: link, owner: harness.owner, sequence: second.sequence, minimumInterval: .milliseconds(50), at: harness.clock.now
        )
        let two = try #require(try harness.run(until: harness.clock.now.advanced(by: .milliseconds(60))).flatMap(\.presentations).first)
        #expect(two.presentedTime == one.presentedTime!.advanced(by: period120 * 6))
    }

    @Test("a frame replaced before a vsync shows it is dropped: presentedTime nil, hitch 0")
    func dropped() throws {
        var harness = Harness()
        let link = try harness.link120()
        let tick = try harness.nextTick()
        #expect(try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now).replaced == nil)
        let replaced = try #require(
            try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now).replaced
        )
        #expect(replaced.dropped && replaced.presentedTime == nil && replaced.hitch == .zero && replaced.sequence == tick.sequence)
        let shown = try harness.run(until: tick.targetTimestamp).flatMap(\.presentations)
        #expect(shown.count == 1)
        let hitches = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        #expect(hitches.frames == 1 && hitches.dropped == 1)
    }

    @Test("Present counts as FrameDone: an unpresented frame makes the next interval skip")
    func presentPaces() throws {
        var harness = Harness()
        let link = try harness.link120()
        let first = try harness.nextTick()
        try harness.present(first, of: link)
        let second = try harness.nextTick()
        #expect(second.sequence == first.sequence + 1 && second.skipped == 0)
        // One vsync passes before its frame is presented: that interval is skipped.
        let third = try harness.presentOneVsyncLate(second, of: link)
        #expect(third.sequence == second.sequence + 2 && third.skipped == 1)
    }

    @Test("a refused Present counts for nothing: the link is still busy with that tick")
    func refusedPresentIsNotAFrameDone() throws {
        var harness = Harness()
        let link = try harness.link120()
        try harness.present(try harness.nextTick(), of: link)
        let second = try harness.nextTick()
        // Aimed at a vsync none of the tick's frame timelines offers: refused.
        #expect(throws: CompositorError.self) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: second.sequence, vsyncID: 0, at: harness.clock.now)
        }
        // The second tick is still unanswered, so the next vsync skips the link; presented
        // properly, it counts: the next tick comes, one interval skipped.
        #expect(harness.compositor.unansweredTicks.map(\.link) == [link])
        let third = try harness.presentOneVsyncLate(second, of: link)
        #expect(third.sequence == second.sequence + 2 && third.skipped == 1)
    }

    @Test("Present refuses a tick never sent, one too old, and another owner's link")
    func refusals() throws {
        var harness = Harness()
        let link = try harness.link120()
        let tick = try harness.nextTick()
        #expect(throws: CompositorError.sequenceNotDelivered(link, sequence: tick.sequence + 1, lastDelivered: tick.sequence)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence + 1, at: harness.clock.now)
        }
        #expect(throws: CompositorError.linkNotFound(link)) {
            try harness.compositor.present(link: link, owner: OwnerID(rawValue: 99), sequence: tick.sequence, at: harness.clock.now)
        }
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
        var latest = tick
        for _ in 0..<10 {
            latest = try harness.nextTick()
            _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: latest.sequence, at: harness.clock.now)
        }
        #expect(throws: CompositorError.sequenceTooOld(link, sequence: tick.sequence, oldest: latest.sequence - 7)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
        }
    }

    @Test("a slow first frame: tick 1's frame presented 20 ticks later is shown, its hitch the whole wait; ticks between are too old")
    func slowFirstFrame() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true, label: "scroller").link
        // Nothing holds the link's ticks back until it answers one: they go on while its
        // first frame renders (shaders compile, caches fill).
        var ticks = [try harness.nextTick()]
        #expect(ticks[0].sequence == 1)
        for _ in 0..<20 { ticks.append(try harness.nextTick()) }
        // Tick 2 is neither the first nor one of the 8 latest (ticks[13] to ticks[20]).
        #expect(throws: CompositorError.sequenceTooOld(link, sequence: ticks[1].sequence, oldest: ticks[13].sequence)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: ticks[1].sequence, at: harness.clock.now)
        }
        try harness.present(ticks[0], of: link)
        // Shown at the next vsync; its hitch runs from tick 1's own target, the whole wait.
        let shown = try #require(try harness.run(seconds: 1.0 / 120).flatMap(\.presentations).first)
        let presented = try #require(shown.presentedTime)
        #expect(shown.sequence == 1 && presented == ticks[20].timestamp.advanced(by: ticks[20].duration))
        #expect(shown.hitch == ticks[0].targetTimestamp.duration(to: presented))
        #expect(shown.hitch >= period120 * 20)
        #expect(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches != nil)
    }

    @Test("a link keeps its first tick only until it presents, and its 8 latest always")
    func firstTickKeptUntilPresent() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true, label: "scroller").link
        var ticks = [try harness.nextTick()]
        for _ in 0..<8 { ticks.append(try harness.nextTick()) }
        // Nine delivered: the first is kept beside the 8 latest (ticks[1] to ticks[8]), so
        // it can be presented.
        try harness.present(ticks[0], of: link)
        var reports = try harness.run(seconds: 1.0 / 120)
        #expect(reports.flatMap(\.presentations).map(\.sequence) == [ticks[0].sequence])
        // A link that presents is held back while its latest tick is unanswered: still nine
        // delivered, but the first is no longer kept, so the oldest it keeps is ticks[1].
        #expect(reports.flatMap(\.ticks).isEmpty)
        #expect(throws: CompositorError.sequenceTooOld(link, sequence: ticks[0].sequence, oldest: ticks[1].sequence)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: ticks[0].sequence, at: harness.clock.now)
        }
        try harness.present(ticks[1], of: link)
        reports = try harness.run(seconds: 1.0 / 120)
        #expect(reports.flatMap(\.presentations).map(\.sequence) == [ticks[1].sequence])
        // Its latest answered, it ticks again: the ring moves on past ticks[1].
        try harness.present(ticks[8], of: link)
        let latest = try harness.nextTick()
        #expect(latest.sequence > ticks[8].sequence)
        #expect(throws: CompositorError.sequenceTooOld(link, sequence: ticks[1].sequence, oldest: ticks[2].sequence)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: ticks[1].sequence, at: harness.clock.now)
        }
        try harness.present(latest, of: link)
    }

    @Test("a skipped sequence is one never sent, not too old")
    func skippedSequences() throws {
        var harness = Harness()
        let link = try harness.link120()
        _ = try harness.nextTick()
        let second = try harness.nextTick()
        try harness.present(second, of: link)
        // An interval the link cannot take (its connection not writable) is skipped: its
        // sequence is never sent, and Present says so rather than calling it too old.
        harness.clock.advance(to: try harness.compositor.nextVsync(of: harness.display))
        #expect(try harness.compositor.vsync(of: harness.display, at: harness.clock.now, canDeliver: { _ in false }).ticks.isEmpty)
        let third = try harness.nextTick()
        #expect(third.sequence == second.sequence + 2 && third.skipped == 1)
        #expect(throws: CompositorError.sequenceNotDelivered(link, sequence: second.sequence + 1, lastDelivered: third.sequence)) {
            try harness.compositor.present(link: link, owner: harness.owner, sequence: second.sequence + 1, at: harness.clock.now)
        }
        try harness.present(third, of: link)
    }

    @Test("a link that never presents has no hitches")
    func neverPresented() throws {
        var harness = Harness()
        let link = try harness.link120()
        try harness.run(seconds: 0.1)
        #expect(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches == nil)
    }

    @Test("the hitch ratio is hitch ms per second of unpaused time over the last 10 s")
    func ratioWindow() throws {
        var harness = Harness()
        let link = try harness.link120()
        let start = harness.clock.now
        // One 16.667 ms hitch.
        let tick = try harness.nextTick()
        harness.clock.advance(by: .milliseconds(20))
        _ = try harness.compositor.present(link: link, owner: harness.owner, sequence: tick.sequence, at: harness.clock.now)
        try harness.run(until: start.advanced(by: .seconds(2)))
        let registered = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)).since
        let unpaused = harness.compositor.instant(sinceStart: registered).duration(to: harness.clock.now)
        var summary = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        let expected = (1000.0 / 60) / (Double(unpaused.components.seconds) + Double(unpaused.components.attoseconds) * 1e-18)
        #expect(abs(summary.ratioMillisecondsPerSecond - expected) < 1e-9)
        // Paused for 1 s: the denominator excludes it.
        _ = try harness.compositor.update(link: link, owner: harness.owner, paused: true, at: harness.clock.now)
        try harness.run(seconds: 1)
        _ = try harness.compositor.update(link: link, owner: harness.owner, paused: false, at: harness.clock.now)
        summary = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        #expect(abs(summary.ratioMillisecondsPerSecond - expected) < 1e-9)
        // 12 s later the hitch has left the window; the totals keep it.
        try harness.run(seconds: 12)
        summary = try #require(harness.compositor.snapshot(of: link, at: harness.clock.now)?.hitches)
        #expect(summary.ratioMillisecondsPerSecond == 0)
        #expect(summary.late == 1 && summary.hitchTime == period120 * 2)
    }
}

import FrameRateModel
import FrameRateTesting
import Testing

/// A compositor handed over through a ``CompositorCheckpoint`` continues exactly: the same
/// links, ids, sequences and rate, and the gap shows as skipped intervals. Stepped clock.
@Suite("Compositor checkpoints (restart handover)")
struct CheckpointTests {
    static let configurations = [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .promotionPhone)]

    @Test("restoring a checkpoint gives back the same checkpoint, snapshot and decision")
    func roundTrip() throws {
        var harness = Harness()
        try harness.register(80, 120, 120, entitled: true, label: "scroll")
        try harness.register(30, 60, 30)
        try harness.register(24, 24, 24, paused: true)
        _ = try harness.compositor.setCaps(display: nil, at: harness.clock.now) { $0.thermalState = .fair }
        try harness.run(seconds: 0.5)
        let link = harness.compositor.snapshot[0].links[0].link
        try harness.compositor.frameDone(link: link, owner: harness.owner, sequence: 3)

        let checkpoint = harness.compositor.checkpoint
        let restored = try Compositor<ManualClock>(restoring: checkpoint, displays: Self.configurations, start: harness.compositor.start)
        #expect(restored.checkpoint == checkpoint)
        // Everything but residency, which the snapshot (format 1) does not carry: the
        // restored display's residency starts at the handover, at the rate in force.
        let (before, after) = (harness.compositor.snapshot[0], restored.snapshot[0])
        #expect(after.refreshRate == before.refreshRate && after.reason == before.reason && after.caps == before.caps)
        #expect(after.links == before.links && after.decision == before.decision && after.targetRate == before.targetRate)
        #expect(after.residency.map(\.rate) == [before.refreshRate])
        #expect(after.residency.allSatisfy { $0.time == .zero })
        #expect(try restored.decision() == harness.compositor.decision())
        #expect(try restored.nextVsync(of: harness.display) == harness.compositor.nextVsync(of: harness.display))
        #expect(restored.links(of: harness.owner).map(\.link) == harness.compositor.links(of: harness.owner).map(\.link))
        #expect(checkpoint.lastLinkID == 3)
        #expect(checkpoint.displays[0].links.map(\.pacing.sequence).allSatisfy { $0 >= 0 })
    }

    @Test("after a 50 ms gap the next tick keeps its sequence and reports the missed vsyncs as skipped")
    func gapIsOneSkippedTick() throws {
        var harness = Harness()
        try harness.register(120, 120, 120, entitled: true)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 120)
        let before = harness.compositor.checkpoint.displays[0].links[0].pacing
        let checkpoint = harness.compositor.checkpoint

        // The handover: 50 ms pass with nobody processing vsyncs (6 vsyncs at 120 Hz).
        harness.clock.advance(by: .milliseconds(50))
        var restored = try Compositor<ManualClock>(restoring: checkpoint, displays: Self.configurations, start: harness.compositor.start)
        let due = try #require(try restored.nextEventfulVsync(of: harness.display))
        #expect(due < harness.clock.now)
        let report = try restored.vsync(of: harness.display, at: harness.clock.now)
        let tick = try #require(report.ticks.first)
        #expect(tick.link == checkpoint.displays[0].links[0].link)
        #expect(tick.skipped == report.missedVsyncs)
        #expect(tick.skipped == 5)
        #expect(tick.sequence == before.sequence + tick.skipped + 1)
        #expect(report.rateChange == nil)
    }

    @Test("new links after a restore continue after the last id handed out")
    func idsContinue() throws {
        var harness = Harness()
        try harness.register(30, 60, 60)
        try harness.register(30, 60, 60)
        _ = try harness.compositor.invalidate(link: LinkID(rawValue: 2), owner: harness.owner, at: harness.clock.now)
        var restored = try Compositor<ManualClock>(
            restoring: harness.compositor.checkpoint, displays: Self.configurations, start: harness.compositor.start
        )
        let status = try restored.register(
            owner: OwnerID(rawValue: 9), configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 30, maximum: 60)),
            at: harness.clock.now
        )
        #expect(status.link == LinkID(rawValue: 3))
    }

    @Test("a checkpoint for other displays, or an inconsistent one, is refused with the reason")
    func mismatches() throws {
        var harness = Harness()
        try harness.register(30, 60, 60)
        let checkpoint = harness.compositor.checkpoint
        let start = harness.compositor.start
        let otherDisplays = [DisplayConfiguration(id: DisplayID(rawValue: 1))]
        #expect(throws: CheckpointMismatch.self) { try Compositor<ManualClock>(restoring: checkpoint, displays: otherDisplays, start: start) }

        var unsupported = checkpoint
        unsupported.displays[0].refreshRate = 75
        let error = #expect(throws: CheckpointMismatch.self) {
            try Compositor<ManualClock>(restoring: unsupported, displays: Self.configurations, start: start)
        }
        #expect(error?.description.contains("75 Hz") == true)

        var inconsistent = checkpoint
        inconsistent.displays[0].links[0].pacing.lastDelivered = inconsistent.displays[0].links[0].pacing.sequence + 1
        #expect(throws: CheckpointMismatch.self) { try Compositor<ManualClock>(restoring: inconsistent, displays: Self.configurations, start: start) }

        var duplicated = checkpoint
        duplicated.displays[0].links.append(duplicated.displays[0].links[0])
        #expect(throws: CheckpointMismatch.self) { try Compositor<ManualClock>(restoring: duplicated, displays: Self.configurations, start: start) }

        var beyond = checkpoint
        beyond.lastLinkID = 0
        #expect(throws: CheckpointMismatch.self) { try Compositor<ManualClock>(restoring: beyond, displays: Self.configurations, start: start) }
    }
}

import FrameRateModel
import FrameRateTesting
import Testing

/// The tick plane sleeps from one ``Compositor/nextEventfulVsync(of:)`` to the next. That
/// is exact only if every vsync where something happens is among them, ticks or not: a
/// panel rate change, a presented frame shown. Each test runs one scenario twice, stepping
/// every vsync and stepping only the eventful ones, and compares what the vsyncs did.
///
/// The scenario: a 60 Hz and a 40 Hz link put the grid at 120 Hz, so a third of its
/// vsyncs tick neither; the event is placed at each phase of the 12-vsync pattern in turn.
@Suite("Eventful vsyncs: sleeping between them changes nothing")
struct EventfulVsyncTests {
    static let period = Duration.seconds(1.0 / 120)

    /// Registers the two links and runs 0.2 s, then `offset` more vsyncs.
    static func twoLinks(offset: Int) throws -> (harness: Harness, sixty: LinkID, forty: LinkID) {
        var harness = Harness()
        let sixty = try harness.register(60, 60, 60, entitled: true).link
        let forty = try harness.register(40, 40, 40, entitled: true).link
        try harness.run(seconds: 0.2)
        for _ in 0..<offset { try harness.run(seconds: 1.0 / 120) }
        return (harness, sixty, forty)
    }

    /// What each vsync that did anything did, one line each.
    static func describe(_ reports: [VsyncReport<ManualClock.Instant>]) -> [String] {
        reports.filter { !$0.ticks.isEmpty || $0.rateChange != nil || $0.panelChange != nil || !$0.presentations.isEmpty }.map { report in
            let ticks = report.ticks.map { "\($0.link.rawValue)#\($0.sequence)@\($0.refreshRate)" }
            let shown = report.presentations.map { "\($0.link.rawValue)#\($0.sequence)\($0.dropped ? " dropped" : "")" }
            return "\(report.index): ticks \(ticks) grid \(report.rateChange.map { "\($0.to)" } ?? "-") "
                + "panel \(report.panelChange.map { "\($0.to)" } ?? "-") shown \(shown)"
        }
    }

    /// Runs `seconds` on `harness` stepping every vsync or only the eventful ones.
    static func run(_ harness: inout Harness, seconds: Double, eventful: Bool) throws -> [String] {
        describe(eventful ? try harness.runEventful(seconds: seconds) : try harness.run(seconds: seconds))
    }

    /// Compares the two runs, naming the first vsync where they part.
    static func expectSame(_ everyVsync: [String], _ eventfulOnly: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let same = everyVsync == eventfulOnly
        let firstDifference = zip(everyVsync, eventfulOnly).first { $0 != $1 }
        #expect(
            same, "first difference (every vsync, eventful only): \(String(describing: firstDifference)); \(everyVsync.count) against \(eventfulOnly.count) lines",
            sourceLocation: sourceLocation
        )
    }

    /// The 60 Hz link reports content at rest after `offset` vsyncs: the panel drops to
    /// 40 Hz after its dwell and comes back when the report expires.
    static func panelScenario(offset: Int, eventful: Bool) throws -> [String] {
        var (harness, sixty, _) = try twoLinks(offset: offset)
        try harness.compositor.reportContentVelocity(link: sixty, owner: harness.owner, velocity: 0, at: harness.clock.now)
        return try run(&harness, seconds: 1.5, eventful: eventful)
    }

    @Test("the panel changes at the same vsyncs", arguments: 0..<6)
    func panelChanges(offset: Int) throws {
        let everyVsync = try Self.panelScenario(offset: offset, eventful: false)
        #expect(everyVsync.contains(where: { $0.contains("panel 40.0") }))
        #expect(everyVsync.contains(where: { $0.contains("panel 120.0") }))
        Self.expectSame(everyVsync, try Self.panelScenario(offset: offset, eventful: true))
    }

    /// The 60 Hz link's next tick is presented at once, to be shown no earlier than
    /// `delay` vsyncs after it.
    static func presentScenario(delay: Int, eventful: Bool) throws -> [String] {
        var (harness, sixty, _) = try twoLinks(offset: 0)
        var tick: Tick<ManualClock.Instant>?
        while tick == nil {
            harness.clock.advance(to: try harness.compositor.nextVsync(of: harness.display))
            tick = try harness.compositor.vsync(of: harness.display, at: harness.clock.now).ticks.first { $0.link == sixty }
        }
        let notBefore = tick!.timestamp.advanced(by: Self.period * delay)
        try harness.compositor.present(link: sixty, owner: harness.owner, sequence: tick!.sequence, notBefore: notBefore, at: harness.clock.now)
        return try run(&harness, seconds: 0.2, eventful: eventful)
    }

    @Test("a presented frame is shown at the same vsync", arguments: 1..<7)
    func presentedFrames(delay: Int) throws {
        let everyVsync = try Self.presentScenario(delay: delay, eventful: false)
        #expect(everyVsync.contains(where: { !$0.hasSuffix("shown []") }))
        Self.expectSame(everyVsync, try Self.presentScenario(delay: delay, eventful: true))
    }

    @Test("in some phases the event falls on a vsync where no link ticks")
    func eventsWithoutTicks() throws {
        var panelOnly: [String] = []
        var shownOnly: [String] = []
        for phase in 0..<6 {
            panelOnly += try Self.panelScenario(offset: phase, eventful: false).filter { $0.contains("ticks []") && $0.contains("panel 40.0") }
            shownOnly += try Self.presentScenario(delay: phase + 1, eventful: false).filter { $0.contains("ticks []") && !$0.hasSuffix("shown []") }
        }
        #expect(!panelOnly.isEmpty)
        #expect(!shownOnly.isEmpty)
    }
}

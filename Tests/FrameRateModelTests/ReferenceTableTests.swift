import FrameRateModel
import FrameRateTesting
import Testing

/// Every row of the reference table in issue 2 / `docs/arbitration.md`, through the public model API.
@Suite("Arbitration reference table")
struct ReferenceTableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var links: [(min: Double, max: Double, preferred: Double, entitled: Bool)]
        var caps = DisplayCaps()
        var profile = DisplayProfile.promotionPhone
        var refresh: Double
        var callbacks: [Double]
        var rule: ArbitrationRule
        var testDescription: String {
            (profile == .promotionPhone ? "" : "\(profile.name): ")
                + links.map { "(\($0.min), \($0.max), \($0.preferred))\($0.entitled ? " E" : "")" }.joined(separator: ", ")
                + (caps == DisplayCaps() ? "" : " \(caps)") + " -> \(refresh) (\(rule.rawValue))"
        }
    }

    static let rows: [Row] = [
        Row(links: [(80, 120, 120, true)], refresh: 120, callbacks: [120], rule: .exact),
        Row(links: [(80, 120, 120, false)], refresh: 60, callbacks: [60], rule: .exact),
        Row(links: [(30, 60, 60, true), (15, 24, 24, true)], refresh: 120, callbacks: [60, 24], rule: .exact),
        Row(links: [(30, 60, 60, true), (30, 60, 30, true)], refresh: 60, callbacks: [60, 30], rule: .exact),
        Row(links: [(48, 48, 48, true)], refresh: 48, callbacks: [48], rule: .exact),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(lowPowerMode: true), refresh: 60, callbacks: [60], rule: .cap),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(limitFrameRate: true), refresh: 60, callbacks: [60], rule: .cap),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(thermalState: .serious), refresh: 60, callbacks: [60], rule: .cap),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(thermalState: .critical), refresh: 60, callbacks: [60], rule: .cap),
        Row(links: [], refresh: 10, callbacks: [], rule: .idle),
        Row(links: [], profile: .promotionPad, refresh: 24, callbacks: [], rule: .idle),
        Row(links: [(10, 120, 0, false)], refresh: 10, callbacks: [10], rule: .exact),
        Row(links: [(10, 120, 0, false), (30, 60, 60, false)], refresh: 60, callbacks: [60, 60], rule: .exact),
        Row(links: [(80, 120, 120, false)], profile: .promotionPad, refresh: 120, callbacks: [120], rule: .exact),
        // The power article's decorative hints keep the panel low.
        Row(links: [(8, 15, 0, false)], refresh: 10, callbacks: [10], rule: .exact),
        Row(links: [(15, 24, 0, false)], refresh: 15, callbacks: [15], rule: .exact),
        // 30 Hz and 60 Hz have priority: served exactly when no rate serves everyone.
        Row(links: [(30, 60, 60, true), (40, 48, 48, true), (40, 48, 48, true)], refresh: 120, callbacks: [60, 40, 40], rule: .priority),
        Row(links: [(24, 30, 30, true), (40, 48, 48, true), (40, 48, 48, true)], refresh: 120, callbacks: [30, 40, 40], rule: .priority),
        // Without a 30 Hz or 60 Hz preference the distance alone decides; then the most served.
        Row(links: [(40, 48, 48, true), (50, 80, 80, true)], refresh: 80, callbacks: [40, 80], rule: .preferred),
        Row(links: [(60, 60, 60, true), (48, 48, 48, true)], refresh: 120, callbacks: [60, 40], rule: .mostServed),
    ]

    @Test("settled refresh and callback rates", arguments: rows)
    func row(_ row: Row) throws {
        var harness = Harness(profile: row.profile, caps: row.caps)
        for link in row.links {
            try harness.register(link.min, link.max, link.preferred, entitled: link.entitled)
        }
        // Past the idle timeout (1 s) and the decrease dwell (250 ms): the "after idle" rows settle.
        try harness.run(seconds: 2)
        #expect(harness.refreshRate == row.refresh)
        #expect(harness.callbackRates == row.callbacks)
        let decision = try harness.compositor.decision()
        #expect(decision.rule == row.rule)
        #expect(decision.rate == row.refresh)
        #expect(decision.pending == nil)
        // The ticks delivered at the end carry the same rates.
        let reports = try harness.run(seconds: 0.5)
        for (index, link) in harness.compositor.snapshot[0].links.enumerated() {
            let ticks = reports.flatMap(\.ticks).filter { $0.link == link.link }
            #expect(!ticks.isEmpty)
            #expect(ticks.allSatisfy { $0.callbackRate == row.callbacks[index] && $0.refreshRate == row.refresh })
        }
    }

    @Test("without the priority of 30 Hz and 60 Hz, the lowest total distance would win")
    func priorityChangesTheOutcome() throws {
        // The same links as the priority rows, with 59 Hz instead of 60 Hz preferred: 48 Hz wins on distance.
        var harness = Harness()
        try harness.register(30, 60, 59, entitled: true)
        try harness.register(40, 48, 48, entitled: true)
        try harness.register(40, 48, 48, entitled: true)
        try harness.run(seconds: 1)
        #expect(harness.refreshRate == 48)
        #expect(try harness.compositor.decision().rule == .preferred)
    }

    @Test("a 30 Hz link on a 120 Hz display ticks on every 4th vsync")
    func thirtyOnOneTwenty() throws {
        var harness = Harness()
        try harness.register(80, 120, 120, entitled: true)
        let slow = try harness.register(30, 30, 30, entitled: true)
        try harness.run(seconds: 0.5)
        #expect(harness.refreshRate == 120)
        let reports = try harness.run(seconds: 0.5)
        #expect(reports.count >= 59)
        let ticking = reports.filter { $0.ticks.contains { $0.link == slow.link } }.map(\.index)
        #expect(ticking.count >= 14)
        #expect(ticking.allSatisfy { $0 % 4 == 0 })
        #expect(zip(ticking, ticking.dropFirst()).allSatisfy { $1 - $0 == 4 })
        #expect(reports.flatMap(\.ticks).filter { $0.link == slow.link }.allSatisfy { $0.callbackRate == 30 && $0.skipped == 0 })
    }

    @Test("the Register answer already names the arbitrated rate")
    func registrationReportsTarget() throws {
        var harness = Harness()
        let status = try harness.register(80, 120, 120, entitled: true)
        #expect(status.refreshRate == 120)
        #expect(status.callbackRate == 120)
    }
}

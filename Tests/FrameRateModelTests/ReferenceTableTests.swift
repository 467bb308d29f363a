import FrameRateModel
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
        var testDescription: String {
            links.map { "(\($0.min), \($0.max), \($0.preferred))\($0.entitled ? " E" : "")" }.joined(separator: ", ")
                + " -> \(refresh)"
        }
    }

    static let rows: [Row] = [
        Row(links: [(80, 120, 120, true)], refresh: 120, callbacks: [120]),
        Row(links: [(80, 120, 120, false)], refresh: 60, callbacks: [60]),
        Row(links: [(30, 60, 60, true), (15, 24, 24, true)], refresh: 120, callbacks: [60, 24]),
        Row(links: [(30, 60, 60, true), (30, 60, 30, true)], refresh: 60, callbacks: [60, 30]),
        Row(links: [(48, 48, 48, true)], refresh: 48, callbacks: [48]),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(lowPowerMode: true), refresh: 60, callbacks: [60]),
        Row(links: [(80, 120, 120, true)], caps: DisplayCaps(thermalState: .critical), refresh: 60, callbacks: [60]),
        Row(links: [], refresh: 10, callbacks: []),
        Row(links: [(10, 120, 0, false)], refresh: 10, callbacks: [10]),
        Row(links: [(10, 120, 0, false), (30, 60, 60, false)], refresh: 60, callbacks: [60, 60]),
        Row(links: [(80, 120, 120, false)], profile: .promotionPad, refresh: 120, callbacks: [120]),
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
        // The ticks delivered at the end carry the same rates.
        let reports = try harness.run(seconds: 0.5)
        for (index, link) in harness.compositor.snapshot[0].links.enumerated() {
            let ticks = reports.flatMap(\.ticks).filter { $0.link == link.link }
            #expect(!ticks.isEmpty)
            #expect(ticks.allSatisfy { $0.callbackRate == row.callbacks[index] && $0.refreshRate == row.refresh })
        }
    }

    @Test("the Register answer already names the arbitrated rate")
    func registrationReportsTarget() throws {
        var harness = Harness()
        let status = try harness.register(80, 120, 120, entitled: true)
        #expect(status.refreshRate == 120)
        #expect(status.callbackRate == 120)
    }
}

import FrameRateTesting
import Testing

@testable import FrameRateModel

/// What ending many boosts or velocity reports at once costs the vsync that processes
/// them: one re-arbitration (a pass over every link, under the model lock, on the tick
/// plane) for all that end before the same vsync, not one each.
@Suite struct ExpiryCostTests {
    static let links = 300

    /// A harness with `links` 60 Hz links, run until the rate settles.
    static func harness() throws -> (Harness, [LinkID]) {
        var harness = Harness()
        var ids: [LinkID] = []
        for _ in 0..<links { ids.append(try harness.register(30, 60, 60, entitled: true).link) }
        try harness.run(seconds: 0.5)
        return (harness, ids)
    }

    @Test("boosts ending microseconds apart end together: a handful of re-arbitrations, not one per boost")
    func boostsEndingTogether() throws {
        var (harness, ids) = try Self.harness()
        // Each boost 10 µs after the one before: 300 distinct ends within 3 ms.
        for id in ids {
            _ = try harness.compositor.boost(link: id, owner: harness.owner, duration: .milliseconds(100), at: harness.clock.now)
            harness.clock.advance(by: .microseconds(10))
        }
        #expect(harness.compositor.snapshot[0].links.allSatisfy { $0.boostedUntil != nil })
        let before = harness.compositor.displays[0].rearbitrations
        try harness.run(seconds: 0.2)
        #expect(harness.compositor.snapshot[0].links.allSatisfy { $0.boostedUntil == nil }, "every boost ended")
        // The ends span one vsync or two; without the grouping this was 300.
        let spent = harness.compositor.displays[0].rearbitrations - before
        #expect(spent <= 4, "\(spent) re-arbitrations for \(Self.links) boost ends")
    }

    @Test("velocity reports expiring microseconds apart end together")
    func velocityReportsExpiringTogether() throws {
        var (harness, ids) = try Self.harness()
        for (index, id) in ids.enumerated() {
            // Alternating table rates, so that reports keep changing the panel's ballot.
            try harness.compositor.reportContentVelocity(link: id, owner: harness.owner, velocity: index.isMultiple(of: 2) ? 100 : 400, at: harness.clock.now)
            harness.clock.advance(by: .microseconds(10))
        }
        #expect(ids.allSatisfy { harness.compositor.contentVelocity(of: $0) != nil })
        let before = harness.compositor.displays[0].rearbitrations
        try harness.run(seconds: ContentVelocityTable.reportLifetime / .seconds(1) + 0.1)
        #expect(ids.allSatisfy { harness.compositor.contentVelocity(of: $0) == nil }, "every report expired")
        let spent = harness.compositor.displays[0].rearbitrations - before
        #expect(spent <= 4, "\(spent) re-arbitrations for \(Self.links) expiries")
    }
}

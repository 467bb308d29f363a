import FrameRateTesting
import Testing

@testable import FrameRateModel

/// The cadences a display keeps across its arbitrations (`CadenceTable`) decide exactly as
/// the cadences computed afresh for one decision do (`Arbiter.decide(votes:caps:)`), through
/// registrations, updates, invalidations and the compactions that churn causes.
@Suite struct CadenceTableTests {
    /// A range from a few minimums and maximums, with no preferred rate, the maximum, a
    /// rate the phone serves exactly, or one in 0.01 Hz steps: many distinct ranges, as in
    /// arbitration's worst case, and sets small enough for every rule to decide.
    static func range(_ rng: inout SeededGenerator) throws -> FrameRateRange {
        let bounds: [Double] = [10, 15, 24, 30, 48, 60, 80, 90, 120]
        let a = bounds.randomElement(using: &rng)!
        let b = bounds.randomElement(using: &rng)!
        let minimum = min(a, b), maximum = max(a, b)
        let served: [Double] = [10, 12, 15, 16, 20, 24, 30, 40, 48, 60, 80, 120].filter { (minimum...maximum).contains($0) }
        let preferred: Double =
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: 0
            case 1: maximum
            case 2: served.randomElement(using: &rng) ?? maximum
            default: min(maximum, max(minimum, (Double.random(in: minimum...maximum, using: &rng) * 100).rounded() / 100))
            }
        return try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
    }

    @Test("a display's kept cadences decide as fresh ones, through 2,500 changes and their compactions", arguments: [1, 2] as [UInt64])
    func keptCadencesDecideAsFreshOnes(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        for (profile, caps) in [(DisplayProfile.promotionPhone, DisplayCaps()), (.promotionPhone, DisplayCaps(lowPowerMode: true))] {
            var harness = Harness(profile: profile, caps: caps)
            let arbiter = Arbiter(profile: profile)
            var live: [LinkID: (range: FrameRateRange, entitled: Bool)] = [:]
            var distinct: Set<FrameRateRange> = []
            var rules: Set<ArbitrationRule> = []
            for step in 0..<2500 {
                // Churn around 3 links, then around 40, in turns of 100 steps: new ranges keep
                // coming and old ones go; the small sets let the exact and priority rules decide.
                let target = (step / 100) % 2 == 0 ? 3 : 40
                let action = live.count < target ? 0 : live.count > target + 2 ? 3 : Int.random(in: 0..<4, using: &rng)
                switch action {
                case 0, 1:
                    let range = try Self.range(&rng)
                    let entitled = Bool.random(using: &rng)
                    let status = try harness.register(range.minimum, range.maximum, range.preferred, entitled: entitled)
                    live[status.link] = (range, entitled)
                    distinct.insert(range)
                case 2:
                    let link = live.anyLink(using: &rng)!
                    let range = try Self.range(&rng)
                    _ = try harness.compositor.update(link: link, owner: harness.owner, range: range, at: harness.clock.now)
                    live[link]?.range = range
                    distinct.insert(range)
                default:
                    let link = live.anyLink(using: &rng)!
                    try harness.compositor.invalidate(link: link, owner: harness.owner, at: harness.clock.now)
                    live[link] = nil
                }
                let votes = live.map { LinkVote(link: $0.key, range: $0.value.range, hasHighFrameRateEntitlement: $0.value.entitled) }
                let fresh = arbiter.decide(votes: votes, caps: caps)
                let kept = try harness.compositor.decision(of: harness.display)
                #expect(
                    kept.rate == fresh.rate && kept.rule == fresh.rule && kept.deciders == fresh.deciders
                        && kept.deciderCount == fresh.deciderCount && kept.limited == fresh.limited && kept.reason == fresh.reason,
                    "step \(step): kept \(kept.reason) / fresh \(fresh.reason)"
                )
                rules.insert(fresh.rule)
            }
            #expect(rules.isSuperset(of: [.exact, .preferred, .mostServed]), "\(rules)")
            // Enough distinct ranges went through the display for its table to compact more
            // than once: it compacts past 256 rows (twice the at most 43 ranges in use is less)
            // down to the ranges in use, so every 214 new ranges at the latest.
            #expect(distinct.count > 256 + 214, "\(distinct.count) distinct ranges")
        }
    }

    @Test("a row holds CallbackCadence's own values, is found again by its range, and a compaction keeps only the rows asked for")
    func rowsAndCompaction() throws {
        let rates = DisplayProfile.promotionPhone.supportedRates
        var table = CadenceTable(rates: rates, seed: HashSeed(value: 7))
        var rng = SeededGenerator(seed: 7)
        var ranges: [FrameRateRange] = []
        while ranges.count < 600 {
            let range = try Self.range(&rng)
            if !ranges.contains(range) { ranges.append(range) }
        }
        for range in ranges {
            let row = table.row(of: range)
            #expect(table.row(of: range) == row, "found again, not added twice")
            for (column, rate) in rates.enumerated() {
                let cadence = CallbackCadence(range: range, refresh: rate)
                let cell = table.cell(row, column)
                #expect(cell.isInside == cadence.isInsideRange && cell.isExact == cadence.isExact && cell.distance == cadence.distance)
            }
        }
        #expect(table.count == 600)
        // 600 rows against 100 in use: more than twice, so only those 100 stay.
        let kept = Array(ranges.suffix(100))
        table.compact(keeping: kept)
        #expect(table.count == 100 && Set(table.ranges) == Set(kept))
        for range in kept {
            let row = table.row(of: range)
            let cadence = CallbackCadence(range: range, refresh: rates[3])
            #expect(table.cell(row, 3).distance == cadence.distance && table.cell(row, 3).isExact == cadence.isExact)
        }
        #expect(table.count == 100, "the kept rows are found, not computed again")
        // At most twice the rows in use (and 256) stay uncompacted.
        for range in ranges.prefix(150) { _ = table.row(of: range) }
        table.compact(keeping: kept)
        #expect(table.count == 250)
    }
}

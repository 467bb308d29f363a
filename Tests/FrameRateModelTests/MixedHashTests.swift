import Testing

@testable import FrameRateModel

/// The model's hash tables mix ranges with a secret seed (``HashSeed``), so that a client
/// cannot register ranges chosen offline to share one slot and make every arbitration
/// probe one long cluster.
@Suite struct MixedHashTests {
    static let seedA = HashSeed(value: 0x0123_4567_89AB_CDEF)
    static let seedB = HashSeed(value: 0xFEDC_BA98_7654_3210)
    /// The tables take a slot from the top bits: 256 slots, the top 8.
    static let slotBits: UInt64 = 8

    static func slot(_ range: FrameRateRange, _ seed: HashSeed) -> Int {
        Int(range.mixedHash(seed: seed) >> (64 - slotBits))
    }

    /// 64 distinct valid ranges that all take slot 0 of 256 under `seedA`, found as an
    /// attacker who knew the seed would find them.
    static func collidingUnderSeedA() throws -> [FrameRateRange] {
        var rng = SeededGenerator(seed: 11)
        var found: [FrameRateRange] = []
        while found.count < 64 {
            let minimum = Double.random(in: 1...60, using: &rng)
            let range = try FrameRateRange(minimum: minimum, maximum: 120, preferred: 0)
            if slot(range, seedA) == 0, !found.contains(range) { found.append(range) }
        }
        return found
    }

    @Test("ranges that share a slot under one seed are spread over the slots under another")
    func collisionsDoNotCarryOverToAnotherSeed() throws {
        let ranges = try Self.collidingUnderSeedA()
        var load = [Int](repeating: 0, count: 1 << Int(Self.slotBits))
        for range in ranges { load[Self.slot(range, Self.seedB)] += 1 }
        // 64 keys over 256 slots: a hash that ignored the seed would put all 64 in one.
        #expect(load.max()! <= 6, "the fullest slot holds \(load.max()!) of 64")
        #expect(load.filter { $0 > 0 }.count >= 40, "\(load.filter { $0 > 0 }.count) slots used")
    }

    @Test("-0 and +0 hash alike under any seed, as they compare equal")
    func signedZeroes() throws {
        let positive = try FrameRateRange(minimum: 10, maximum: 60, preferred: 0)
        let negative = try FrameRateRange(minimum: 10, maximum: 60, preferred: -0.0)
        #expect(positive == negative)
        #expect(positive.mixedHash(seed: Self.seedA) == negative.mixedHash(seed: Self.seedA))
        #expect(positive.mixedHash(seed: Self.seedB) == negative.mixedHash(seed: Self.seedB))
    }

    @Test("the seed never shows in a result: the same rows and the same decision under either seed")
    func resultsDoNotDependOnTheSeed() throws {
        let ranges = try Self.collidingUnderSeedA()
        let rates = DisplayProfile.promotionPhone.supportedRates
        var tableA = CadenceTable(rates: rates, seed: Self.seedA)
        var tableB = CadenceTable(rates: rates, seed: Self.seedB)
        for range in ranges + ranges.reversed() {
            let row = tableA.row(of: range)
            #expect(tableB.row(of: range) == row)
        }
        #expect(tableA.count == ranges.count && tableB.count == ranges.count)
        #expect(tableA.ranges == tableB.ranges)

        let votes = ranges.enumerated().map { index, range in
            LinkVote(link: LinkID(rawValue: UInt64(index + 1)), range: range, hasHighFrameRateEntitlement: index.isMultiple(of: 2))
        }
        let decisionA = Arbiter(profile: .promotionPhone, hashSeed: Self.seedA).decide(votes: votes, caps: DisplayCaps())
        let decisionB = Arbiter(profile: .promotionPhone, hashSeed: Self.seedB).decide(votes: votes, caps: DisplayCaps())
        #expect(decisionA == decisionB)
        #expect(decisionA.deciderCount + decisionA.limitedCount > 0, "a decision that names links")
    }

    @Test("each arbiter draws its own seed")
    func arbitersDrawFreshSeeds() {
        let seeds = (0..<4).map { _ in Arbiter(profile: .promotionPhone).hashSeed }
        #expect(Set(seeds.map(\.value)).count == 4)
    }
}

import Testing

@testable import FrameRateModel

/// ``TickingDivisors``: the earliest next tick from the distinct divisors is the one a
/// pass over every link finds, through any sequence of changes.
@Suite struct TickingDivisorsTests {
    @Test("a link counts once, at its latest divisor; nil takes it out")
    func setMovesAndRemoves() {
        var ticking = TickingDivisors()
        ticking.set(LinkID(rawValue: 1), to: 4)
        ticking.set(LinkID(rawValue: 2), to: 4)
        ticking.set(LinkID(rawValue: 3), to: 6)
        #expect(ticking.counts == [4: 2, 6: 1])
        ticking.set(LinkID(rawValue: 1), to: 6)
        #expect(ticking.counts == [4: 1, 6: 2])
        ticking.set(LinkID(rawValue: 2), to: nil)
        ticking.set(LinkID(rawValue: 2), to: nil)
        #expect(ticking.counts == [6: 2])
        #expect(ticking.firstTick(atOrAfter: 7) == 12)
        ticking.set(LinkID(rawValue: 1), to: nil)
        ticking.set(LinkID(rawValue: 3), to: nil)
        #expect(ticking.counts.isEmpty)
        #expect(ticking.firstTick(atOrAfter: 7) == nil)
    }

    @Test("a multiple past UInt64's range is never due, and does not trap")
    func nearTheEndOfTheIndices() {
        var ticking = TickingDivisors()
        ticking.set(LinkID(rawValue: 1), to: 2)
        // 2^64 - 1 is odd: the next multiple of 2 is past the range.
        #expect(ticking.firstTick(atOrAfter: UInt64.max) == nil)
        #expect(ticking.firstTick(atOrAfter: UInt64.max - 1) == UInt64.max - 1)
        // 2^64 - 1 is a multiple of 3.
        ticking.set(LinkID(rawValue: 2), to: 3)
        #expect(ticking.firstTick(atOrAfter: UInt64.max) == UInt64.max)
        #expect(ticking.firstTick(atOrAfter: UInt64.max - 2) == UInt64.max - 1)
    }

    @Test("the first tick is the earliest multiple of a counted divisor at or after the vsync")
    func firstTickMatchesEveryLink() {
        var generator = SeededGenerator(seed: 7)
        var ticking = TickingDivisors()
        var divisors: [LinkID: Int] = [:]
        for step in 0..<2_000 {
            let link = LinkID(rawValue: UInt64.random(in: 1...40, using: &generator))
            let divisor: Int? = Bool.random(using: &generator) ? Int.random(in: 1...12, using: &generator) : nil
            ticking.set(link, to: divisor)
            divisors[link] = divisor
            let next = UInt64(step) * 7 + UInt64.random(in: 0...100, using: &generator)
            let everyLink = divisors.values.map { UInt64($0) }.map { (next + $0 - 1) / $0 * $0 }.min()
            #expect(ticking.firstTick(atOrAfter: next) == everyLink, "step \(step), vsync \(next)")
        }
    }
}

import Testing

@testable import FrameRateModel

/// The bounded, sorted lists a decision names links from (`LowestLinks`): however entries
/// arrive (one by one in any order, as sorted runs with their unlisted rest counted, or
/// merged from other lists), the list holds the lowest `Decision.listLimit` and the total.
@Suite struct LowestLinksTests {
    static func ids(_ list: LowestLinks<LinkID>) -> [UInt64] { list.items.map(\.rawValue) }

    @Test("entries inserted in any order list the lowest 16, sorted, and count them all")
    func insertion() {
        var rng = SeededGenerator(seed: 11)
        for count in [0, 1, 2, 15, 16, 17, 40] {
            let values = (1...max(count, 1)).prefix(count).map { UInt64($0) * 3 }.shuffled(using: &rng)
            var list = LowestLinks<LinkID>()
            for value in values { list.insert(LinkID(rawValue: value)) }
            #expect(Self.ids(list) == Array(values.sorted().prefix(Decision.listLimit)), "\(count) entries")
            #expect(list.total == count)
        }
    }

    @Test("merging lists, each a sorted run with unlisted entries counted, equals inserting every entry")
    func merging() {
        var rng = SeededGenerator(seed: 12)
        for _ in 0..<200 {
            // Runs of distinct ids, each inserted as a ballot entry is: its lowest 16, the rest counted.
            var pool = Array(1...UInt64(400)).shuffled(using: &rng)
            var runs: [[UInt64]] = []
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                let size = Int.random(in: 1...40, using: &rng)
                runs.append(Array(pool.prefix(size)).sorted())
                pool.removeFirst(min(size, pool.count))
            }
            var merged = LowestLinks<LinkID>()
            var every = LowestLinks<LinkID>()
            for run in runs {
                var list = LowestLinks<LinkID>()
                for value in run.prefix(Decision.listLimit) { list.insert(LinkID(rawValue: value)) }
                list.countUnlisted(run.count - min(run.count, Decision.listLimit))
                merged.merge(list)
                for value in run { every.insert(LinkID(rawValue: value)) }
            }
            #expect(Self.ids(merged) == Self.ids(every), "runs \(runs)")
            #expect(merged.total == every.total && merged.total == runs.map(\.count).reduce(0, +))
        }
    }
}

import FrameRateModel
import Testing

@testable import FrameRateServer

/// The owner table's slot reuse when connections close in any order: lowest free slot first,
/// and owner ids that are never handed out twice.
@Suite struct OwnerTableCloseOrderTests {
    static func slot(of owner: OwnerID) -> UInt64 { owner.rawValue & 0xFFFF_FFFF }

    @Test func closedSlotsAreReusedLowestFirstWhateverTheOrderTheyClosedIn() {
        var table = OwnerTable<Int>()
        var owners: [OwnerID] = []
        for value in 0..<8 {
            let owner = table.nextOwner()
            table[owner] = value
            owners.append(owner)
        }
        #expect(owners.map(Self.slot(of:)) == Array(1...8))
        for index in [5, 1, 7, 3, 6] { table.removeValue(forKey: owners[index]) }
        #expect(table.count == 3)
        let reused = (0..<6).map { _ in
            let owner = table.nextOwner()
            table[owner] = 0
            return owner
        }
        // Slots 2, 4, 6, 7, 8 were freed (indices 1, 3, 5, 6, 7); then a new ninth.
        #expect(reused.map(Self.slot(of:)) == [2, 4, 6, 7, 8, 9])
        #expect(table.count == 9)
    }

    @Test func aReusedSlotNeverAnswersForItsPreviousOwner() {
        var table = OwnerTable<String>()
        let first = table.nextOwner()
        table[first] = "first"
        table.removeValue(forKey: first)
        let second = table.nextOwner()
        table[second] = "second"
        #expect(Self.slot(of: first) == Self.slot(of: second))
        #expect(first != second)
        #expect(table[first] == nil)
        #expect(table.removeValue(forKey: first) == nil)
        #expect(table[second] == "second")
    }

    @Test func thousandsOfClosesInAnyOrderKeepEverySlotOnce() {
        var table = OwnerTable<Int>()
        let owners = (0..<4096).map { value -> OwnerID in
            let owner = table.nextOwner()
            table[owner] = value
            return owner
        }
        // A fixed pseudo-random order (a full-period LCG over 4,096).
        var index = 0
        for _ in 0..<4096 {
            index = (index * 1_103_515_245 + 12_345) & 4095
            table.removeValue(forKey: owners[index])
        }
        #expect(table.isEmpty)
        let slots = (0..<4096).map { _ in Self.slot(of: table.nextOwner()) }
        #expect(slots == Array(1...4096))
    }
}

import FrameRateModel
@testable import FrameRatePosix
import Testing

@testable import FrameRateServer

/// The owner-indexed tables of sessions and writers: slots reused lowest first, and a
/// free list that never holds more than the table's slots.
@Suite struct OwnerTableTests {
    @Test func sessionsReuseTheLowestFreeSlotWithANewGeneration() {
        var table = OwnerTable<String>()
        let owners = (0..<3).map { _ in table.nextOwner() }
        for (index, owner) in owners.enumerated() { table[owner] = "session \(index)" }
        table[owners[2]] = nil
        table[owners[0]] = nil
        let reused = table.nextOwner()
        #expect(reused.rawValue == 2 << 32 | 1)  // slot 0's second owner: generation 2
        #expect(table[owners[0]] == nil)  // the old id no longer names the slot
        table[reused] = "session 3"
        #expect(table.count == 2)
        #expect(table.freeSlotCount == 1)  // slot 2
        #expect(table.nextOwner().rawValue == 2 << 32 | 3)
    }

    /// A batch built for a connection that closed may still be sent after its slot's next
    /// owner has taken the slot's word in `TickGates`: only their tags tell them apart, so
    /// a slot's consecutive owners must never share one, whatever happens in other slots.
    @Test("a slot's consecutive owners have distinct tick-gate tags, however many connections come and go elsewhere")
    func consecutiveOwnersOfASlotHaveDistinctTags() {
        var table = OwnerTable<Int>()
        let held = table.nextOwner()  // slot 0, for good
        table[held] = 0
        var previous = table.nextOwner()  // slot 1
        table[previous] = 1
        for round in 0..<2_000 {
            // Connections come and go in other slots between two owners of slot 1.
            let others = (0..<3).map { _ in table.nextOwner() }
            for owner in others { table[owner] = round }
            for owner in others { table[owner] = nil }
            table[previous] = nil
            let next = table.nextOwner()
            #expect(next.tickGate.slot == 1)
            #expect(next.rawValue >> 32 == (previous.rawValue >> 32) + 1, "consecutive generations in the slot")
            #expect(next.tickGate.tag != previous.tickGate.tag)
            table[next] = round
            previous = next
        }
        // After a handover the successor starts above its predecessor's last generation; the
        // slot's next tag still differs from the adopted owner's, even when the jump is a
        // multiple of the tag space.
        var successor = OwnerTable<Int>()
        let adopted = OwnerID(rawValue: 5 << 32 | 1)
        successor.adopt(7, for: adopted)
        successor.lastGeneration = 5 + TickGates.tagCount - 1
        successor[adopted] = nil
        let after = successor.nextOwner()
        #expect(after.tickGate.slot == 0)
        #expect(after.rawValue >> 32 > 5 + TickGates.tagCount - 1)
        #expect(after.tickGate.tag != adopted.tickGate.tag)
        #expect(successor.lastGeneration == after.rawValue >> 32)
    }

    @Test("a slot whose 2^32 - 1 generations are used up is never reused: its ids would repeat")
    func anExhaustedSlotIsRetired() {
        var table = OwnerTable<Int>()
        // Slot 0 adopted at the last generation an id can carry, then closed.
        let last = OwnerID(rawValue: OwnerTable<Int>.lastGenerationOfASlot << 32 | 1)
        table.adopt(1, for: last)
        table[last] = nil
        let next = table.nextOwner()
        #expect(next.tickGate.slot == 1, "slot 0 is retired")
        #expect(next.rawValue >> 32 == 1)
        table[next] = 2
        #expect(table.freeSlotCount == 0)
        #expect(table.nextOwner().tickGate.slot == 2)
    }

    /// The writers' table is filled with ids the sessions' table hands out: it never calls
    /// `nextOwner()`, so nothing takes slots off its free list but the inserts themselves.
    /// Each close used to append to that list for good (and sort all of it): a daemon that
    /// had seen a million connections sorted a million entries on every close.
    @Test func aTableFilledWithOutsideIdsKeepsItsFreeListBounded() {
        var sessions = OwnerTable<Int>()
        var writers = OwnerTable<Int>()
        var open: [OwnerID] = []
        for round in 0..<10_000 {
            let owner = sessions.nextOwner()
            sessions[owner] = round
            writers[owner] = round
            open.append(owner)
            if open.count == 4 || round % 3 == 0 {
                let closing = open.removeFirst()
                sessions[closing] = nil
                writers[closing] = nil
            }
        }
        #expect(writers.count == open.count)
        #expect(sessions.count == open.count)
        #expect(writers.freeSlotCount <= 4)
        #expect(sessions.freeSlotCount <= 4)
        for owner in open {
            #expect(writers[owner] != nil)
            writers[owner] = nil
        }
        #expect(writers.isEmpty)
        #expect(writers.freeSlotCount <= 4)
    }

    @Test func anIdPastTheEndListsTheSlotsItSkipsAsFree() {
        var table = OwnerTable<Int>()
        table[OwnerID(rawValue: 1 << 32 | 3)] = 7  // slot 2
        #expect(table.count == 1)
        #expect(table.freeSlotCount == 2)  // slots 0 and 1
        table[OwnerID(rawValue: 2 << 32 | 1)] = 8  // slot 0
        #expect(table.freeSlotCount == 1)
        table[OwnerID(rawValue: 1 << 32 | 3)] = nil
        #expect(table.freeSlotCount == 2)
    }
}

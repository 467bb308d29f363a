package import FrameRateModel
import FrameRatePosix

/// Values indexed by owner id (the control loop's sessions, the tick plane's writers), so
/// the tick fan-out finds a tick's connection by indexing an array instead of hashing.
///
/// An owner id is `generation << 32 | (slot + 1)`: slots of closed connections are reused
/// (lowest first), and each slot's generation only grows, so an owner id still names only
/// its own connection after its slot is reused (ticks computed for a connection that closed
/// meanwhile find nothing). Generations count per slot: the owners of one slot, one after
/// the other, have consecutive generations, so their ``TickGates`` tags (taken from the
/// generation) differ, however many connections came and went in other slots meanwhile.
package struct OwnerTable<Value> {
    private var slots: [(owner: OwnerID, value: Value)?] = []
    /// Free slots, highest first, so `popLast` reuses the lowest.
    private var free: [Int] = []
    /// Per slot: the generation of the latest owner id handed out or adopted for it.
    private var slotGenerations: [UInt64] = []
    /// Ids handed out from now on have a generation above this (a predecessor's last one,
    /// after a handover: no id of its can come back).
    private var generationFloor: UInt64 = 0
    /// The highest generation handed out or adopted.
    private var highestGeneration: UInt64 = 0
    /// Open sessions.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Every value, in slot order (a new array: for shutdown and status, not the tick path).
    var values: [Value] { slots.compactMap { $0?.value } }

    /// The owner id the next session gets (its slot is reserved until the session is stored or the id dropped).
    mutating func nextOwner() -> OwnerID {
        while true {
            let slot: Int
            let reused: Bool
            if let free = free.popLast() {
                (slot, reused) = (free, true)
            } else {
                slots.append(nil)
                (slot, reused) = (slots.count - 1, false)
            }
            let previous = generation(of: slot)
            var generation = Swift.max(previous, generationFloor) + 1
            // Past a handover's floor the step can be larger than one: keep the slot's next
            // tag different from its previous owner's all the same.
            if TickGates.tag(of: generation) == TickGates.tag(of: previous) { generation += 1 }
            if generation > Self.lastGenerationOfASlot {
                // The slot's 2^32 - 1 owners are used up: its next id would repeat an old
                // one (whose label residency may still name), so it is never used again.
                if reused { continue }
                // A new slot past a floor at the top of the range (nothing left to avoid).
                generation = 1
            }
            setGeneration(generation, of: slot)
            return OwnerID(rawValue: generation << 32 | UInt64(slot + 1))
        }
    }

    /// The highest generation an owner id can carry (its high 32 bits).
    static var lastGenerationOfASlot: UInt64 { UInt64(UInt32.max) }

    /// The generation of `slot`'s latest owner id (0: none yet).
    private func generation(of slot: Int) -> UInt64 {
        slotGenerations.indices.contains(slot) ? slotGenerations[slot] : 0
    }

    private mutating func setGeneration(_ generation: UInt64, of slot: Int) {
        guard slot >= 0 else { return }
        if slot >= slotGenerations.count {
            slotGenerations.append(contentsOf: repeatElement(0, count: slot + 1 - slotGenerations.count))
        }
        slotGenerations[slot] = Swift.max(slotGenerations[slot], generation)
        highestGeneration = Swift.max(highestGeneration, generation)
    }

    /// Stores `value` under an owner id handed out by a previous daemon, and makes sure
    /// ``nextOwner()`` never hands out its generation again.
    mutating func adopt(_ value: Value, for owner: OwnerID) {
        setGeneration(owner.rawValue >> 32, of: Self.slot(of: owner))
        insert(value, for: owner)
        free = slots.indices.filter { slots[$0] == nil }.reversed()
    }

    /// The last generation handed out (the high half of owner ids), for a handover.
    var lastGeneration: UInt64 {
        get { highestGeneration }
        set {
            generationFloor = Swift.max(generationFloor, newValue)
            highestGeneration = Swift.max(highestGeneration, newValue)
        }
    }

    /// The value of `owner`, if present; setting `nil` is ``removeValue(forKey:)``.
    package subscript(owner: OwnerID) -> Value? {
        get {
            let slot = Self.slot(of: owner)
            guard slots.indices.contains(slot), let entry = slots[slot], entry.owner == owner else { return nil }
            return entry.value
        }
        set {
            if let newValue { insert(newValue, for: owner) } else { removeValue(forKey: owner) }
        }
    }

    /// The value of `owner` without a retain, if present: for the tick plane, which keeps
    /// the values alive otherwise (see ``DaemonState/removeWriter(of:)``) and would
    /// otherwise take a cache miss per connection and vsync on the reference count.
    func unretained(_ owner: OwnerID) -> Unmanaged<Value>? where Value: AnyObject {
        let slot = Self.slot(of: owner)
        guard slots.indices.contains(slot) else { return nil }
        return slots.withUnsafeBufferPointer { slots in
            guard let entry = slots[slot], entry.owner == owner else { return nil }
            return Unmanaged.passUnretained(entry.value)
        }
    }

    /// The slot of `owner` (its connection's place in the table, from 0): the index of
    /// per-connection arrays kept beside the table.
    static func slot(of owner: OwnerID) -> Int { Int(truncatingIfNeeded: owner.rawValue & 0xFFFF_FFFF) - 1 }

    private mutating func insert(_ value: Value, for owner: OwnerID) {
        let slot = Self.slot(of: owner)
        if slot >= slots.count {
            // Slots skipped over are free (a table filled by owner ids handed out elsewhere,
            // as the writers' is by the sessions'), so every empty slot is listed once.
            for skipped in slots.count..<slot { addFree(skipped) }
            slots.append(contentsOf: repeatElement(nil, count: slot + 1 - slots.count))
        }
        if slots[slot] == nil {
            count += 1
            // Not free any more (already taken off by `nextOwner()` in a table that hands out ids).
            let listed = Self.position(of: slot, in: free)
            if listed < free.count, free[listed] == slot { free.remove(at: listed) }
        }
        slots[slot] = (owner, value)
    }

    /// Lists `slot` as free, keeping `free` highest first (a binary search, no sort).
    private mutating func addFree(_ slot: Int) {
        free.insert(slot, at: Self.position(of: slot, in: free))
    }

    /// Where `slot` is, or would go, in `list` (sorted highest first): the first index whose
    /// entry is not above it.
    private static func position(of slot: Int, in list: [Int]) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] > slot { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Empty slots listed as free: at most the number of slots, however many values came
    /// and went (for the tests).
    var freeSlotCount: Int { free.count }

    /// Removes and returns the value of `owner`, freeing its slot.
    @discardableResult
    mutating func removeValue(forKey owner: OwnerID) -> Value? {
        let slot = Self.slot(of: owner)
        guard slots.indices.contains(slot), let entry = slots[slot], entry.owner == owner else { return nil }
        slots[slot] = nil
        count -= 1
        addFree(slot)
        return entry.value
    }
}

extension OwnerTable: Sendable where Value: Sendable {}

import FrameRateModel

/// The open sessions, indexed by owner id, so the tick fan-out finds a tick's connection
/// by indexing an array instead of hashing.
///
/// An owner id is `generation << 32 | (slot + 1)`: slots of closed sessions are reused
/// (lowest first), the generation never is, so an owner id still names only its own
/// session after its slot is reused (a fan-out that yielded to the loop may hold ticks
/// of a connection that closed meanwhile: the lookup then finds nothing).
struct SessionTable {
    private var slots: [Session?] = []
    /// Free slots, highest first, so `popLast` reuses the lowest.
    private var free: [Int] = []
    /// Counts sessions opened: the high half of every owner id.
    private var generation: UInt64 = 0
    /// Open sessions.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Every open session, in slot order (a new array: for shutdown and status, not the tick path).
    var values: [Session] { slots.compactMap { $0 } }

    /// The owner id the next session gets (its slot is reserved until the session is stored or the id dropped).
    mutating func nextOwner() -> OwnerID {
        generation += 1
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
        } else {
            slots.append(nil)
            slot = slots.count - 1
        }
        return OwnerID(rawValue: generation << 32 | UInt64(slot + 1))
    }

    private static func slot(of owner: OwnerID) -> Int { Int(truncatingIfNeeded: owner.rawValue & 0xFFFF_FFFF) - 1 }

    /// The session of `owner`, if open; setting `nil` is ``removeValue(forKey:)``.
    subscript(owner: OwnerID) -> Session? {
        get {
            let slot = Self.slot(of: owner)
            guard slots.indices.contains(slot), let session = slots[slot], session.owner == owner else { return nil }
            return session
        }
        set {
            if let newValue { insert(newValue, for: owner) } else { removeValue(forKey: owner) }
        }
    }

    private mutating func insert(_ session: Session, for owner: OwnerID) {
        let slot = Self.slot(of: owner)
        precondition(slots.indices.contains(slot), "owner ids come from nextOwner()")
        if slots[slot] == nil { count += 1 }
        slots[slot] = session
    }

    /// Removes and returns the session of `owner`, freeing its slot.
    @discardableResult
    mutating func removeValue(forKey owner: OwnerID) -> Session? {
        let slot = Self.slot(of: owner)
        guard slots.indices.contains(slot), let session = slots[slot], session.owner == owner else { return nil }
        slots[slot] = nil
        count -= 1
        free.append(slot)
        free.sort(by: >)
        return session
    }
}

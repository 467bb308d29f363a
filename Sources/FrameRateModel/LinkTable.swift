/// A display's links in registration order, each in a slot it keeps while it lives.
///
/// A link's slot does not move when other links go: a slot found with ``slot(of:)`` stays
/// valid until that link itself is removed. Removing links costs O(1) for each removed
/// link plus one pass over ``order``, whose entries are 4-byte slot numbers. The plain
/// array this replaces shifted every later link (about 450 bytes each, with a retain
/// and release of their arrays) and re-hashed their positions at each removal: when
/// 4,000 one-link connections closed at once, the control loop was busy for 1.7 s and
/// every other client's calls waited; 0.13 s with the table (`docs/performance.md`).
///
/// Iterating the table (it is a `Sequence`) yields the live links in registration order.
/// Freed slots are reused by later links; the slot array keeps its largest size.
struct LinkTable: Sendable {
    typealias Link = DisplayLinkState

    /// The links by slot; ``vacant`` in a free slot. Not optional: the tick plane's pass
    /// reads and writes links in place through the slots' buffer, and unwrapping an
    /// optional there cost 13 % more instructions a tick (callgrind, 1,000 links).
    private var slots: [Link] = []
    /// Whether each slot holds a link: what a removal's pass over ``order`` reads, one
    /// byte a slot, instead of each link's storage.
    private var occupied: [Bool] = []
    /// Free slots, reused last-freed first.
    private var freeSlots: [Int32] = []
    /// The live links' slots, in registration order.
    private(set) var order: [Int32] = []
    /// Each live link's slot.
    private var slotOfLink: [LinkID: Int32] = [:]

    /// What a free slot holds: a paused link of no owner, whose storage (empty arrays)
    /// is shared, so that freeing a slot releases the removed link's.
    private static let vacant: Link = {
        let range = FrameRateRange(uncheckedMinimum: 60, maximum: 60, preferred: 60)
        return Link(
            id: LinkID(rawValue: 0), owner: OwnerID(rawValue: 0), configuration: DisplayLinkConfiguration(range: range, isPaused: true),
            pacer: LinkPacer(cadence: CallbackCadence(range: range, refresh: 60)), since: .zero, presentation: LinkPresentation(since: .zero, paused: true)
        )
    }()

    init() {}

    /// Live links.
    var count: Int { order.count }

    var isEmpty: Bool { order.isEmpty }

    /// The slot of link `id`, or `nil` when the table does not hold it.
    func slot(of id: LinkID) -> Int? { slotOfLink[id].map(Int.init) }

    func contains(_ id: LinkID) -> Bool { slotOfLink[id] != nil }

    /// The link in `slot`, which must hold one (a slot from ``slot(of:)`` or ``order``).
    subscript(slot: Int) -> Link {
        get { slots[slot] }
        _modify {
            let id = slots[slot].id
            yield &slots[slot]
            assert(slots[slot].id == id, "a slot's link was replaced by another link")
        }
    }

    /// Adds `link` last in registration order; its id must not be in the table.
    /// - Returns: its slot.
    @discardableResult
    mutating func append(_ link: Link) -> Int {
        precondition(slotOfLink[link.id] == nil, "\(link.id) is in the table already")
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            slots[Int(free)] = link
            occupied[Int(free)] = true
        } else {
            // A display holds at most the daemon's connections times their links: far below 2^31.
            guard let next = Int32(exactly: slots.count) else { preconditionFailure("more than Int32.max links on one display") }
            slot = next
            slots.append(link)
            occupied.append(true)
        }
        slotOfLink[link.id] = slot
        order.append(slot)
        return Int(slot)
    }

    /// Removes the links `ids` names that the table holds (others are ignored).
    /// - Returns: the ids removed, in the order `ids` gave them.
    mutating func remove(_ ids: some Sequence<LinkID>) -> [LinkID] {
        var removed: [LinkID] = []
        var onlySlot: Int32?
        for id in ids {
            guard let slot = slotOfLink.removeValue(forKey: id) else { continue }
            slots[Int(slot)] = Self.vacant
            occupied[Int(slot)] = false
            freeSlots.append(slot)
            removed.append(id)
            onlySlot = removed.count == 1 ? slot : nil
        }
        if let onlySlot, let index = order.firstIndex(of: onlySlot) {
            order.remove(at: index)
        } else if !removed.isEmpty {
            order.removeAll { !occupied[Int($0)] }
        }
        return removed
    }

    /// Calls `body` with the slots (those in ``order`` hold the links; the others are free)
    /// and ``order``: for passes that write many links in place without a uniqueness check each.
    mutating func withUnsafeMutableSlots<R>(_ body: (UnsafeMutableBufferPointer<Link>, UnsafeBufferPointer<Int32>) throws -> R) rethrows -> R {
        try order.withUnsafeBufferPointer { order in
            try slots.withUnsafeMutableBufferPointer { try body($0, order) }
        }
    }
}

extension LinkTable: Sequence {
    /// The live links in registration order.
    struct Iterator: IteratorProtocol {
        private let table: LinkTable
        private var position = 0

        init(_ table: LinkTable) { self.table = table }

        mutating func next() -> Link? {
            guard position < table.order.count else { return nil }
            defer { position += 1 }
            return table.slots[Int(table.order[position])]
        }
    }

    func makeIterator() -> Iterator { Iterator(self) }

    var underestimatedCount: Int { order.count }
}

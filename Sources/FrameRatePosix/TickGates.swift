import Synchronization

/// One word per connection slot, side by side, through which a fan-out thread claims a
/// connection's socket for a vsync's tick lines without touching (or locking) the
/// connection's ``SocketWriter``.
///
/// Reaching each writer once per vsync was the fan-out's largest user-space cost: its
/// lock sits in an object that the kernel's sends evict between vsyncs, so the claim and
/// the landing each waited for memory, once per connection (about 4 % of the fan-out
/// thread at 2,000 links). The words of 2,000 connections are 16 KB.
///
/// A word holds the connection's descriptor (bits 32–63), a tag naming the connection
/// that owns the slot now (bits 3–31), and flags:
/// - ``open``: the writer allows unlocked tick sends: a socket, not failed nor closed,
///   nothing queued, no reply in progress. Only the writer sets or clears it, under its lock.
/// - ``inFlight``: a fan-out thread is sending on the descriptor outside the writer's lock.
/// - ``registered``: the descriptor is in the shard's io_uring file table.
///
/// The protocol (every change is one atomic read-modify-write of the word, so they are
/// totally ordered):
/// - the fan-out claims by swapping in ``inFlight`` only from a word with ``open`` set and
///   ``inFlight`` clear, and the right tag (``claim(slot:tag:needsRegistration:)``);
/// - the writer, before it sends or closes the descriptor itself, clears ``open`` and
///   learns in the same step whether a claim is in flight; if one is, it queues (or defers
///   the close) and the landing takes the writer's lock;
/// - the fan-out lands by clearing ``inFlight`` only if the word is still the one it
///   claimed (``landIfUnchanged(slot:claimed:)``); otherwise (the writer cleared ``open``
///   meanwhile) it lands through the writer's lock, which carries out what was deferred.
/// So a descriptor is never sent to by two threads at once, nor after its close. A word
/// whose tag is not the writer's belongs to a newer connection in the same slot: neither
/// side touches it on the old connection's behalf. The writer's side also compares the
/// descriptor (``TickGate``): a connection's deferred close releases its word only while
/// the word names its own descriptor, which is still open then, so a newer connection's
/// word never matches it even if the two tags were equal.
///
/// Two writers of one connection share its slot and tag when it moves its ticks to a tick
/// socket (framerated's `TickSocket/Attach`): the tick socket's writer installs its word
/// with a plain store, before the fan-out ever claimed the connection, and from then on the
/// first writer's gate, naming the other descriptor, owns nothing and changes nothing.
public final class TickGates: @unchecked Sendable {
    // @unchecked: `words` is allocated once in `init`, never reallocated, and freed only in
    // `deinit`; every access to a word is atomic (`Atomic` operations on its own address).

    /// The writer allows unlocked tick sends.
    public static let open: UInt64 = 1
    /// A fan-out thread is sending outside the writer's lock.
    public static let inFlight: UInt64 = 2
    /// The descriptor is in the io_uring file table of the slot's fan-out thread.
    public static let registered: UInt64 = 4
    /// The bits of the tag.
    static let tagMask: UInt64 = 0xFFFF_FFF8
    /// The bits of the descriptor.
    static let descriptorMask: UInt64 = 0xFFFF_FFFF_0000_0000
    /// Distinct tags: connections of one slot whose numbers differ by less than this
    /// never share one (consecutive numbers never do).
    static let tagCount: UInt64 = (1 << 29) - 1

    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    /// Slots in the table: connections in slots at or above it are claimed through their writers.
    public let capacity: Int

    /// - Parameter capacity: slots (the most connections the daemon serves at once).
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
        words = .allocate(capacity: self.capacity)
        for slot in 0..<self.capacity { (words + slot).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: capacity)
        words.deallocate()
    }

    /// The tag bits for the connection numbered `generation` (any number that tells the
    /// connections of one slot apart: the owner id's high half).
    public static func tag(of generation: UInt64) -> UInt64 {
        // 1 ... tagCount: 0 is no connection's (a slot never used, or released, matches
        // none), and `generation` and `generation + 1` always differ.
        (generation % tagCount + 1) << 3
    }

    /// The gate of `slot` for a connection tagged `tag`, or `nil` beyond the table.
    public func gate(slot: Int, tag: UInt64) -> TickGate? {
        guard slot >= 0, slot < capacity else { return nil }
        return TickGate(gates: self, slot: slot, tag: tag)
    }

    func word(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { words + slot }

    /// Claims `slot`'s descriptor for an unlocked send, if its writer allows it now.
    /// - Parameter needsRegistration: only claim a descriptor in the io_uring file table.
    /// - Returns: the descriptor and the word as claimed (for ``landIfUnchanged(slot:claimed:)``).
    @inline(__always)
    public func claim(slot: Int, tag: UInt64, needsRegistration: Bool) -> (descriptor: Int32, claimed: UInt64)? {
        guard slot >= 0, slot < capacity else { return nil }
        let word = words[slot].load(ordering: .acquiring)
        let required = Self.open | (needsRegistration ? Self.registered : 0)
        guard word & Self.tagMask == tag, word & required == required, word & Self.inFlight == 0 else { return nil }
        let claimed = word | Self.inFlight
        guard words[slot].compareExchange(expected: word, desired: claimed, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        return (Int32(truncatingIfNeeded: word >> 32), claimed)
    }

    /// Ends an unlocked send whose whole line reached the kernel, if nothing changed since
    /// the claim. `false`: the writer cleared ``open`` meanwhile; land through the writer.
    @inline(__always)
    public func landIfUnchanged(slot: Int, claimed: UInt64) -> Bool {
        guard slot >= 0, slot < capacity else { return false }
        return words[slot].compareExchange(expected: claimed, desired: claimed & ~Self.inFlight, ordering: .acquiringAndReleasing)
            .exchanged
    }
}

/// A connection's word in ``TickGates``, as its ``SocketWriter`` sees it: every change is
/// made only while the word carries this connection's tag.
public struct TickGate: Sendable {
    let gates: TickGates
    let slot: Int
    let tag: UInt64
    /// The tag and, once installed, the descriptor: what names this connection's word.
    private var identity: UInt64
    private static let identityMask = TickGates.descriptorMask | TickGates.tagMask

    init(gates: TickGates, slot: Int, tag: UInt64) {
        self.gates = gates
        self.slot = slot
        self.tag = tag
        identity = tag
    }

    /// Takes the slot for a new connection on `descriptor` (no flag set).
    /// - Returns: the gate to use from now on, which also knows the descriptor.
    func installed(descriptor: Int32) -> TickGate {
        var gate = self
        gate.identity = UInt64(UInt32(bitPattern: descriptor)) << 32 | tag
        gates.word(slot).pointee.store(gate.identity, ordering: .releasing)
        return gate
    }

    /// Whether `word` is this connection's.
    private func owns(_ word: UInt64) -> Bool { word & Self.identityMask == identity }

    /// Applies `change` to the word while it is this connection's.
    /// - Returns: the word before the change (`nil`: the slot is another connection's now).
    @discardableResult
    private func update(_ change: (UInt64) -> UInt64) -> UInt64? {
        let word = gates.word(slot)
        var current = word.pointee.load(ordering: .acquiring)
        while owns(current) {
            let (exchanged, original) = word.pointee.compareExchange(
                expected: current, desired: change(current), ordering: .acquiringAndReleasing
            )
            if exchanged { return original }
            current = original
        }
        return nil
    }

    /// Stops unlocked claims. - Returns: whether one is in flight (it lands through the writer).
    func close() -> Bool {
        guard let before = update({ $0 & ~TickGates.open }) else { return false }
        return before & TickGates.inFlight != 0
    }

    /// Allows unlocked claims again, unless one is still in flight (its landing reopens).
    func reopen() {
        update { $0 & TickGates.inFlight != 0 ? $0 : $0 | TickGates.open }
    }

    /// Whether a claim (unlocked or through the writer) is in flight.
    var isInFlight: Bool {
        let word = gates.word(slot).pointee.load(ordering: .acquiring)
        return owns(word) && word & TickGates.inFlight != 0
    }

    /// Marks a claim made through the writer's lock.
    func beginSend() { update { $0 | TickGates.inFlight } }

    /// Ends a claim, either kind, landing through the writer: clears the mark and stops
    /// unlocked claims in one step (the writer reopens once nothing is queued).
    func endSend() { update { $0 & ~(TickGates.inFlight | TickGates.open) } }

    /// The descriptor went into the shard's io_uring file table.
    func markRegistered() { update { $0 | TickGates.registered } }

    /// The connection closed its descriptor: the word no longer names it.
    func release() { update { _ in 0 } }
}

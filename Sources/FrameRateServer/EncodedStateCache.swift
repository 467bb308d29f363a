import NIOCore

/// The encoded `GetState` result per viewer scope (``Viewer/Scope``), for one model
/// generation: a flood of GetState between two changes costs one snapshot and one
/// encoding per scope that asks, then a copy of the bytes per request.
///
/// Bounded: at most ``capacity`` encodings are kept. Privileged viewers share one entry
/// (they all see everything); each unprivileged uid that asks gets its own. Past the
/// bound an entry is dropped to make room (re-encoded if its scope asks again), so memory
/// stays at most `capacity` × one encoded state however many users ask.
struct EncodedStateCache {
    /// The most encodings kept at once.
    static let defaultCapacity = 64

    let capacity: Int
    /// The model generation the entries show.
    private(set) var generation: UInt64?
    private var entries: [Viewer.Scope: ByteBuffer] = [:]

    init(capacity: Int = EncodedStateCache.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// How many encodings are kept now.
    var count: Int { entries.count }

    /// The state encoded for `scope` at `generation`, if kept.
    func bytes(for scope: Viewer.Scope, generation: UInt64) -> ByteBuffer? {
        guard generation == self.generation else { return nil }
        return entries[scope]
    }

    /// Keeps `bytes`, the state encoded for `scope` at `generation`; entries of another
    /// generation go, and one other entry goes when the cache is full.
    mutating func store(_ bytes: ByteBuffer, for scope: Viewer.Scope, generation: UInt64) {
        if generation != self.generation {
            entries.removeAll(keepingCapacity: true)
            self.generation = generation
        }
        if entries[scope] == nil, entries.count >= capacity, let victim = entries.keys.first {
            entries[victim] = nil
        }
        entries[scope] = bytes
    }
}

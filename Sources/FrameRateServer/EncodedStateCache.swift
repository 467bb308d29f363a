import FrameRateModel
import NIOCore

/// The encoded `GetState` result per viewer scope (``Viewer/Scope``), for one edition of
/// the state (the daemon's is a model generation and a 100 ms window, ``StateEdition``):
/// a flood of GetState between two changes costs one snapshot and one encoding per scope
/// that asks, then a copy of the bytes per request.
///
/// Bounded: at most ``capacity`` encodings are kept. Privileged viewers share one entry
/// (they all see everything); each unprivileged uid that asks gets its own. Past the
/// bound an entry is dropped to make room (re-encoded if its scope asks again), so memory
/// stays at most `capacity` × one encoded state however many users ask.
struct EncodedStateCache<Edition: Equatable> {
    let capacity: Int
    /// The edition the entries show.
    private(set) var generation: Edition?
    private var entries: [Viewer.Scope: ByteBuffer] = [:]

    init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// How many encodings are kept now.
    var count: Int { entries.count }

    /// The state encoded for `scope` at `generation`, if kept.
    func bytes(for scope: Viewer.Scope, generation: Edition) -> ByteBuffer? {
        guard generation == self.generation else { return nil }
        return entries[scope]
    }

    /// Keeps `bytes`, the state encoded for `scope` at `generation`; entries of another
    /// generation go, and one other entry goes when the cache is full.
    mutating func store(_ bytes: ByteBuffer, for scope: Viewer.Scope, generation: Edition) {
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

/// What one encoded `GetState` shows: a model generation (any change) and the window of
/// ``lifetime`` it was built in, since residency and hitch ratios change with time alone.
struct StateEdition: Equatable {
    let generation: UInt64
    let window: Int64

    /// How long an encoding is reused while nothing changes.
    static let lifetime = Duration.milliseconds(100)

    /// The edition at `generation`, `elapsed` after the compositor's start.
    init(generation: UInt64, elapsed: Duration) {
        self.generation = generation
        self.window = FrameRateMath.wholeNumber(elapsed / Self.lifetime, clampedTo: 0...Int64.max)
    }
}

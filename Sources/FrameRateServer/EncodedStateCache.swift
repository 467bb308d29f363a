import FrameRateModel
import NIOCore

/// The encoded `GetState` result per viewer scope (``Viewer/Scope``), for one edition of
/// the state (the daemon's is a model generation, ``StateEdition``): a flood of GetState
/// between two changes costs one snapshot and one encoding per scope that asks, then a
/// copy of the bytes per request.
///
/// An encoding is reused for at most ``lifetime`` after it was finished, since residency
/// and hitch ratios change with time alone. The lifetime counts from the end of the
/// encoding, not from the request that asked for it: a state that takes longer than the
/// lifetime to encode (1,000 links on a debug build) is still reused by the requests that
/// waited behind it.
///
/// Bounded: at most ``capacity`` encodings are kept. Privileged viewers share one entry
/// (they all see everything); each unprivileged uid that asks gets its own. Past the
/// bound an entry is dropped to make room (re-encoded if its scope asks again), so memory
/// stays at most `capacity` × one encoded state however many users ask.
struct EncodedStateCache<Edition: Equatable> {
    let capacity: Int
    /// How long an encoding is reused while its edition stands.
    let lifetime: Duration
    /// The edition the entries show.
    private(set) var edition: Edition?
    private var entries: [Viewer.Scope: Entry] = [:]

    private struct Entry {
        let bytes: ByteBuffer
        /// When the entry stops being reused (the same clock as the `at` arguments).
        let expires: Duration
    }

    /// - Parameters:
    ///   - capacity: the most encodings kept at once (at least 1).
    ///   - lifetime: how long an encoding is reused after it was finished.
    init(capacity: Int = 64, lifetime: Duration = .milliseconds(100)) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// How many encodings are kept now.
    var count: Int { entries.count }

    /// The state encoded for `scope` at `edition`, if kept and not expired at `now`.
    /// - Parameter now: time since a fixed origin (the daemon's: its compositor's start).
    func bytes(for scope: Viewer.Scope, edition: Edition, at now: Duration) -> ByteBuffer? {
        guard edition == self.edition, let entry = entries[scope], now < entry.expires else { return nil }
        return entry.bytes
    }

    /// Keeps `bytes`, the state encoded for `scope` at `edition` and finished at `now`
    /// (the same clock as ``bytes(for:edition:at:)``); entries of another edition go, and
    /// one other entry goes when the cache is full (an expired one first).
    mutating func store(_ bytes: ByteBuffer, for scope: Viewer.Scope, edition: Edition, at now: Duration) {
        if edition != self.edition {
            entries.removeAll(keepingCapacity: true)
            self.edition = edition
        }
        if entries[scope] == nil, entries.count >= capacity,
            let victim = entries.first(where: { $0.value.expires <= now })?.key ?? entries.keys.first
        {
            entries[victim] = nil
        }
        entries[scope] = Entry(bytes: bytes, expires: now + lifetime)
    }
}

/// What one encoded `GetState` shows: a model generation (any change shown bumps it), and
/// on a virtual clock also the exact virtual instant (its time stands still between
/// steps, and `now` in the state must be exact).
struct StateEdition: Equatable {
    let generation: UInt64
    /// The virtual instant, as the exact time since the compositor's start; `nil` on the
    /// real clock, where the cache's lifetime bounds how old a reused encoding is.
    let virtualInstant: Duration?

    init(generation: UInt64, virtualInstant: Duration? = nil) {
        self.generation = generation
        self.virtualInstant = virtualInstant
    }
}

import FrameRateModel
import Synchronization

/// A connection's live links and watches by their application-visible ids,
/// across all its sessions: what a reconnect registers again, and how
/// ``FrameRateConnection/update(link:range:paused:)`` and friends find a link's
/// current daemon-side id.
///
/// A link's application-visible id is the id the daemon gave it at its first
/// registration, unless a live link of this connection already has that id (a
/// restarted daemon numbers from 1 again); then it is one more than the largest
/// live id. Watches likewise. Lock order: a router's lock may be held while this
/// one is taken, never the other way round.
final class StreamRegistry: Sendable {
    private struct State {
        var links: [LinkID: LinkRecord] = [:]
        var watches: [UInt64: WatchRecord] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// Adds `record` under `preferred`, or the next free id; returns the id.
    func claimLink(_ record: LinkRecord, preferred: LinkID) -> LinkID {
        state.withLock { state in
            var id = preferred
            if state.links[id] != nil {
                id = LinkID(rawValue: (state.links.keys.map(\.rawValue).max() ?? preferred.rawValue) + 1)
            }
            state.links[id] = record
            return id
        }
    }

    /// Adds `record` under `preferred`, or the next free id; returns the id.
    func claimWatch(_ record: WatchRecord, preferred: UInt64) -> UInt64 {
        state.withLock { state in
            var id = preferred
            if state.watches[id] != nil { id = (state.watches.keys.max() ?? preferred) + 1 }
            state.watches[id] = record
            return id
        }
    }

    /// Removes link `id` if it is `record`.
    func removeLink(_ id: LinkID, _ record: LinkRecord) {
        state.withLock { state in
            if state.links[id] === record { state.links[id] = nil }
        }
    }

    /// Removes watch `id` if it is `record`.
    func removeWatch(_ id: UInt64, _ record: WatchRecord) {
        state.withLock { state in
            if state.watches[id] === record { state.watches[id] = nil }
        }
    }

    /// The live link with application-visible id `id`.
    func link(_ id: LinkID) -> LinkRecord? { state.withLock { $0.links[id] } }

    /// The live watch with application-visible id `id`.
    func watch(_ id: UInt64) -> WatchRecord? { state.withLock { $0.watches[id] } }

    /// Every live link and watch, in id order (the order they are registered again in).
    var live: (links: [LinkRecord], watches: [WatchRecord]) {
        state.withLock { state in
            (
                state.links.sorted { $0.key < $1.key }.map(\.value),
                state.watches.sorted { $0.key < $1.key }.map(\.value)
            )
        }
    }
}

import FrameRateProtocol
import Synchronization

/// What the client knows about one of its compositor watches, shared by its
/// ``CompositorWatch``, the connection's ``StreamRegistry`` and the router
/// that currently routes it: its application-visible id, where it lives on the
/// daemon, and its event stream (which outlives any one connection).
final class WatchRecord: Sendable {
    struct State: Sendable {
        /// The application-visible id, fixed at the first Watch.
        var id: UInt64?
        /// Where the watch lives on the daemon now.
        var attachment: StreamAttachment<UInt64> = .detached
        /// Whether it has ended (unwatched, failed to come back, or the connection closed).
        var ended = false
    }

    /// The watch's event stream.
    let events: AsyncStream<CompositorWatchEvent>.Continuation
    /// The connection's live watches, which this record leaves when it ends.
    let registry: StreamRegistry
    private let state = Mutex(State())

    init(events: AsyncStream<CompositorWatchEvent>.Continuation, registry: StreamRegistry) {
        self.events = events
        self.registry = registry
    }

    /// A copy of the current state.
    var snapshot: State { state.withLock { $0 } }

    /// The router and daemon-side id, while attached and live.
    var target: (router: ClientRouter, id: UInt64)? {
        state.withLock { $0.ended ? nil : $0.attachment.target }
    }

    /// A Watch was answered with `daemonID` on `router`'s connection; see
    /// ``LinkRecord/attach(router:daemonID:)``.
    func attach(router: ClientRouter, daemonID: UInt64) -> Bool {
        guard let existing = state.withLock({ $0.ended ? nil : Optional($0.id) }) else { return false }
        let id = existing ?? registry.claimWatch(self, preferred: daemonID)
        let attached = state.withLock { state in
            guard !state.ended else { return false }
            state.id = id
            state.attachment = .attached(router, daemonID)
            return true
        }
        if !attached { registry.removeWatch(id, self) }
        return attached
    }

    /// Starts watching again on `router`'s connection; `false` when the watch has
    /// ended or is already on that connection.
    func beginRewatching(on router: ClientRouter) -> Bool {
        state.withLock { state in
            guard !state.ended, !state.attachment.isOn(router) else { return false }
            state.attachment = .registering(router)
            return true
        }
    }

    /// Delivers an event, carrying the application-visible watch id.
    func deliver(_ event: CompositorWatchEvent) {
        guard let id = state.withLock({ $0.ended ? nil : $0.id }) else { return }
        var event = event
        event.watch = id
        events.yield(event)
    }

    /// Ends the watch: leaves the registry and finishes the event stream.
    func finish() {
        let id: UInt64? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state.id
        }
        if let id { registry.removeWatch(id, self) }
        events.finish()
    }
}

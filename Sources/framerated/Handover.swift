import FrameRateServer
import FrameRateSystemd
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// framerated's side of a restart that keeps every connection: the names it uses in
/// systemd's file descriptor store, what the previous process left there, and how this
/// one stores its own.
enum Handover {
    /// Every client connection (matched to the snapshot by inode, so one name serves all).
    static let connectionName = "handover-connection"
    /// The sealed memory file with the snapshot.
    static let snapshotName = "handover-snapshot"
    /// The listening socket, when it is not a socket unit's (which systemd passes anyway).
    static let listenerName = "handover-listener"

    /// What systemd passed, sorted out: the listener to use, what to adopt, and what to close.
    struct Passed {
        var listener: ListenedSockets.Socket?
        var adoption: ServerConfiguration.Adoption?
        /// Whether the listener came from a socket unit (then it is never stored).
        var listenerFromSocketUnit: Bool
    }

    /// Sorts the passed descriptors and empties the store (what the previous process left
    /// there is now this one's: serve it or close it, never leave it behind).
    static func sort(_ passed: [ListenedSockets.Socket], socketName: String, logger: Logger) throws -> Passed {
        let stored = passed.filter { [connectionName, snapshotName, listenerName].contains($0.name) }
        let activation = passed.filter { !stored.contains($0) }
        var listener = try ListenedSockets.listener(named: socketName, in: activation)
        let fromSocketUnit = listener != nil
        if listener == nil, let kept = stored.first(where: { $0.name == listenerName }) {
            listener = try ListenedSockets.listener(named: listenerName, in: [kept])
        }
        for socket in stored where socket.name == listenerName && socket.descriptor != listener?.descriptor {
            close(socket.descriptor)
        }
        let connections = stored.filter { $0.name == connectionName }.map(\.descriptor)
        let snapshots = stored.filter { $0.name == snapshotName }.map(\.descriptor)
        // Only the newest snapshot can be the previous process's; older ones are stale.
        for extra in snapshots.dropLast() { close(extra) }
        if !stored.isEmpty {
            let store = FileDescriptorStore()
            for name in [connectionName, snapshotName, listenerName] {
                do {
                    try store.remove(name: name)
                } catch {
                    logger.warning("cannot empty systemd's file descriptor store: \(error)", metadata: ["event": "handover-store-error"])
                }
            }
        }
        let adoption = connections.isEmpty && snapshots.isEmpty ? nil : ServerConfiguration.Adoption(snapshot: snapshots.last, connections: connections)
        return Passed(listener: listener, adoption: adoption, listenerFromSocketUnit: fromSocketUnit)
    }

    /// The server's hand-over hook: stores the connections, then the listener (unless a
    /// socket unit passes it anyway), then the snapshot last, so a snapshot in the store
    /// always comes with its connections; waits until systemd has them all.
    static func storeHook(listenerFromSocketUnit: Bool) -> @Sendable (HandoverDescriptors) throws -> Void {
        { descriptors in
            let store = FileDescriptorStore()
            do {
                try store.store(descriptors.connections, name: connectionName)
                if let listener = descriptors.listener, !listenerFromSocketUnit { try store.store([listener], name: listenerName) }
                try store.store([descriptors.snapshot], name: snapshotName)
                try store.barrier(timeout: .seconds(5))
            } catch {
                // Leave nothing behind that would keep connections open after this process closes them.
                for name in [connectionName, listenerName, snapshotName] { try? store.remove(name: name) }
                throw error
            }
        }
    }
}

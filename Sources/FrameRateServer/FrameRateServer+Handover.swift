#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging
import NIOCore

extension FrameRateServer {
    /// The old daemon's side: stops and drains every connection, stores them with the
    /// snapshot through `store`, and closes its own copies. Falls back to a usual stop
    /// (links get `Closed`) when anything fails.
    /// - Returns: whether the connections were handed over.
    static func handOver(
        with store: @Sendable (HandoverDescriptors) throws -> Void, core bound: NIOLoopBound<CompositorCore>, listener: Int32?,
        drainTimeout: Duration, logger: Logger
    ) async -> Bool {
        let eventLoop = bound.eventLoop
        do {
            let package = try await eventLoop.flatSubmit { bound.value.prepareHandover(drainTimeout: drainTimeout) }.get()
            let memory = try MemoryFile.create(name: "framerated-handover", contents: package.snapshot.encoded())
            defer { SystemCall.close(memory) }
            try store(HandoverDescriptors(connections: package.descriptors, snapshot: memory, listener: listener))
            try await eventLoop.flatSubmit { bound.value.finishHandover() }.get()
            let links = package.snapshot.compositor.displays.reduce(0) { $0 + $1.links.count }
            let connections = package.snapshot.sessions.count
            let tickSockets = package.snapshot.sessions.filter { $0.tickInode != nil }.count
            let tickNote = tickSockets > 0 ? " (\(tickSockets) with a tick socket)" : ""
            logger.notice(
                "handed \(connections) connections\(tickNote) and \(links) links over to the next daemon",
                metadata: ["event": "handover-stored", "connections": "\(connections)", "links": "\(links)", "tick_sockets": "\(tickSockets)"]
            )
            return true
        } catch {
            logger.error(
                "cannot hand the connections over (\(error)); stopping as usual: links get Closed (UNAVAILABLE)",
                metadata: ["event": "handover-failed"]
            )
            try? await eventLoop.flatSubmit { bound.value.abandonHandover() }.get()
            return false
        }
    }

    /// What the new daemon takes over: the checked snapshot, the compositor restored from
    /// it, and each connection to serve with its record.
    struct TakeOver {
        var snapshot: HandoverSnapshot
        var compositor: Compositor<MonotonicClock>
        var adopted: [(HandoverSession, Int32)]
    }

    /// The new daemon's side, before anything runs: reads and checks the snapshot,
    /// restores the compositor, matches each connection to its record by inode. Whatever
    /// cannot be taken over is closed cleanly (`shutdown`, so the client reads end of
    /// stream at once and reconnects); `nil` when nothing can be.
    static func sortHandedOver(
        _ adoption: ServerConfiguration.Adoption, configuration: ServerConfiguration, logger: Logger
    ) -> TakeOver? {
        func closeAll(_ descriptors: [Int32]) {
            for descriptor in descriptors {
                SystemCall.shutdownBoth(descriptor)
                SystemCall.close(descriptor)
            }
        }
        func fallBack(_ reason: String) -> TakeOver? {
            logger.warning(
                "cannot take over the previous daemon's \(adoption.connections.count) connections: \(reason); closing them, their clients reconnect",
                metadata: ["event": "handover-refused", "connections": "\(adoption.connections.count)"]
            )
            closeAll(adoption.connections)
            return nil
        }
        guard let memory = adoption.snapshot else {
            if adoption.connections.isEmpty { return nil }
            return fallBack("no snapshot came with them (the previous daemon crashed or did not finish its handover)")
        }
        let snapshot: HandoverSnapshot
        let compositor: Compositor<MonotonicClock>
        do {
            defer { SystemCall.close(memory) }
            snapshot = try HandoverSnapshot(decoding: try MemoryFile.read(memory, limit: HandoverSnapshot.maximumSize))
            guard snapshot.start <= MonotonicClock.now.nanoseconds, snapshot.takenAt <= MonotonicClock.now.nanoseconds else {
                throw HandoverSnapshotError.mismatch("it was taken after now (another boot?)")
            }
            do {
                compositor = try Compositor(
                    restoring: snapshot.compositor, displays: configuration.displays, governor: configuration.governor,
                    start: MonotonicClock.Instant(nanoseconds: snapshot.start)
                )
            } catch {
                throw HandoverSnapshotError.mismatch(error.description)
            }
        } catch {
            return fallBack("\(error)")
        }

        var byInode: [UInt64: Int32] = [:]
        var strays: [Int32] = []
        for descriptor in adoption.connections {
            SystemCall.setCloseOnExec(descriptor)
            if SystemCall.isConnectedStreamSocket(descriptor), let inode = SystemCall.inode(of: descriptor), byInode[inode] == nil {
                byInode[inode] = descriptor
            } else {
                strays.append(descriptor)
            }
        }
        var adopted: [(HandoverSession, Int32)] = []
        var owners = Set<OwnerID>()
        // An owner id's slot indexes an array: bound it by the connection limit.
        let slots = UInt64(max(1, configuration.limits.connections)) * 4
        for record in snapshot.sessions {
            let slot = record.owner.rawValue & 0xFFFF_FFFF
            guard (1...slots).contains(slot), !owners.contains(record.owner), byInode[record.inode] != nil else { continue }
            var record = record
            if let tickInode = record.tickInode {
                // Without its tick socket the connection is not taken over (closed below).
                guard tickInode != record.inode, let tickDescriptor = byInode.removeValue(forKey: tickInode) else { continue }
                record.tickDescriptor = tickDescriptor
            }
            guard let descriptor = byInode.removeValue(forKey: record.inode) else { continue }
            owners.insert(record.owner)
            adopted.append((record, descriptor))
        }
        closeAll(strays + Array(byInode.values))
        return TakeOver(snapshot: snapshot, compositor: compositor, adopted: adopted)
    }

    /// Installs what ``sortHandedOver(_:configuration:logger:)`` found on the control loop
    /// (the compositor; links of clients that left meanwhile are released) and logs it.
    static func restore(_ takeOver: TakeOver, core bound: NIOLoopBound<CompositorCore>, logger: Logger) async {
        let owners = Set(takeOver.adopted.map(\.0.owner))
        let snapshot = takeOver.snapshot
        let compositor = takeOver.compositor
        let released = try? await bound.eventLoop.submit { bound.value.restore(snapshot, compositor: compositor, adopted: owners) }.get()
        let links = snapshot.compositor.displays.reduce(0) { $0 + $1.links.count } - (released?.count ?? 0)
        let gap = Double(MonotonicClock.now.nanoseconds - snapshot.takenAt) / 1e6
        let releasedNote = released.map { $0.isEmpty ? "" : "; released \($0.count) links whose clients left meanwhile" } ?? ""
        logger.notice(
            "took over \(takeOver.adopted.count) connections and \(links) links from the previous daemon (\(Int(gap.rounded())) ms since it stopped)\(releasedNote)",
            metadata: ["event": "handover-adopted", "connections": "\(takeOver.adopted.count)", "links": "\(links)"]
        )
    }
}

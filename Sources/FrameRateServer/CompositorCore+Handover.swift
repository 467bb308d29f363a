import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging
import NIOCore

/// What a handover gives the process around the server: the snapshot and each connection's
/// socket (owned by its writer until ``CompositorCore/finishHandover()``).
struct HandoverPackage {
    var snapshot: HandoverSnapshot
    var descriptors: [Int32]
}

extension CompositorCore {
    // MARK: The old daemon

    /// Stops every connection's reading and handling, waits up to `drainTimeout` for each
    /// writer to hand its queued bytes to the kernel, and takes the snapshot. Call after
    /// the tick plane has stopped (no tick is written meanwhile).
    ///
    /// A connection being closed, or one whose queue did not drain in time (its client is
    /// not reading), is not handed over: it is closed and its client reconnects.
    func prepareHandover(drainTimeout: Duration) -> EventLoopFuture<HandoverPackage> {
        eventLoop.preconditionInEventLoop()
        // A batch half run cannot be handed over as bytes (its first messages would run
        // twice), nor finished once requests are refused: it is finished first.
        for session in sessions.values { session.finishLine?() }
        lifecycle = .handingOver
        // A connection that became another's tick socket (its close still to come) is
        // not a connection of its own: its socket goes over as that one's tick socket.
        let candidates = sessions.values.filter { !$0.becameTickSocket }
        let stopped = candidates.map { session in
            (session.handOver?() ?? eventLoop.makeSucceededFuture(nil)).recover { _ in nil }
        }
        let deadline = now().advanced(by: drainTimeout)
        // Every callback runs on this loop (futures of this loop), which owns the sessions.
        return EventLoopFuture.whenAllSucceed(stopped, on: eventLoop).assumeIsolated().flatMap { pending in
            let ready = zip(candidates, pending).compactMap { session, input in input.map { (session, $0) } }
            return self.drain(ready.map(\.0), until: deadline).assumeIsolated().map { drained in
                self.package(ready.filter { drained.contains(ObjectIdentifier($0.0)) })
            }.nonisolated()
        }.nonisolated()
    }

    /// Flushes every writer (the tick plane, which would on `EPOLLOUT`, has stopped) until all
    /// are empty or `deadline` passes, polling every 2 ms. Returns the drained sessions.
    private func drain(_ sessions: [Session], until deadline: MonotonicClock.Instant) -> EventLoopFuture<Set<ObjectIdentifier>> {
        let pending = sessions.filter { session in
            // Both writers of a connection with a tick socket flush, whatever the first says.
            let repliesFlushed = session.writer.flush()
            let ticksFlushed = session.tickWriter?.flush() ?? true
            return !(repliesFlushed && ticksFlushed) && !session.writer.isClosed && session.tickWriter?.isClosed != true
        }
        let failed = Set(
            sessions.filter { $0.writer.isClosed || $0.descriptor == nil || $0.tickWriter?.isClosed == true }.map { ObjectIdentifier($0) }
        )
        let done = Set(sessions.map { ObjectIdentifier($0) }).subtracting(pending.map { ObjectIdentifier($0) }).subtracting(failed)
        if pending.isEmpty || now() >= deadline {
            for session in pending {
                logger.warning(
                    "handover: a client has not read its last \(session.writer.queuedBytes + (session.tickWriter?.queuedBytes ?? 0)) bytes; closing it instead of handing it over",
                    metadata: peerMetadata(session.peer).merging(["event": "handover-dropped"]) { $1 }
                )
            }
            return eventLoop.makeSucceededFuture(done)
        }
        return eventLoop.assumeIsolated().flatScheduleTask(deadline: .now() + .milliseconds(2)) {
            self.drain(pending, until: deadline).map { done.union($0) }
        }.futureResult
    }

    private func package(_ ready: [(Session, [UInt8])]) -> HandoverPackage {
        var records: [HandoverSession] = []
        var descriptors: [Int32] = []
        for (session, input) in ready {
            guard let descriptor = session.descriptor, let inode = SystemCall.inode(of: descriptor) else { continue }
            var tickInode: UInt64?
            if let tickDescriptor = session.tickDescriptor {
                guard let inode = SystemCall.inode(of: tickDescriptor) else { continue }
                tickInode = inode
                descriptors.append(tickDescriptor)
            }
            records.append(
                HandoverSession(owner: session.owner, inode: inode, watches: session.watches.sorted(), pendingInput: input, tickInode: tickInode)
            )
            descriptors.append(descriptor)
        }
        let (checkpoint, start) = shared.read { ($0.compositor.checkpoint, $0.compositor.start) }
        let snapshot = HandoverSnapshot(
            start: start.nanoseconds, takenAt: now().nanoseconds, compositor: checkpoint, sessions: records,
            lastWatch: lastWatch, ownerGeneration: sessions.lastGeneration
        )
        return HandoverPackage(snapshot: snapshot, descriptors: descriptors)
    }

    /// Closes this process's copy of every connection (the service manager holds the
    /// stored ones): links and watches are not released, nothing is sent.
    func finishHandover() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        var closed: [EventLoopFuture<Void>] = []
        for session in sessions.values {
            session.writer.close()
            session.tickWriter?.close()
            let promise = eventLoop.makePromise(of: Void.self)
            session.context.close(promise: promise)
            closed.append(promise.futureResult.recover { _ in })
        }
        return EventLoopFuture.andAllComplete(closed, on: eventLoop)
    }

    /// The handover could not be stored: stop as usual (links get `Closed`, connections close).
    func abandonHandover() -> EventLoopFuture<Void> {
        lifecycle = .stopping
        return shutdown()
    }

    // MARK: The new daemon

    /// Installs the previous daemon's compositor and counters. Owners in `checkpoint` that
    /// come back without a connection lose their links (their client went away meanwhile).
    func restore(_ snapshot: HandoverSnapshot, compositor: Compositor<MonotonicClock>, adopted: Set<OwnerID>) -> [LinkID] {
        eventLoop.preconditionInEventLoop()
        lastWatch = snapshot.lastWatch
        sessions.lastGeneration = snapshot.ownerGeneration
        let at = now()
        let (released, waits) = shared.change { state -> ([LinkID], [(link: LinkID, awaited: UInt64)]) in
            state.compositor = compositor
            var released: [LinkID] = []
            for owner in snapshot.compositor.owners where !adopted.contains(owner) {
                released += state.compositor.removeLinks(of: owner, at: at)
            }
            return (released, state.compositor.reportedWaits)
        }
        // The previous daemon announced these waits (the pacers keep that across the
        // handover), and its watches come along: their ends are announced here. Whether it
        // logged each wait's journal line is not handed over; most are (10 per user per 10 s).
        for wait in waits { announcedHeldBack[wait.link] = (wait.awaited, true) }
        return released
    }

    /// Once every handed-over connection has been served: the owners among `adopted` whose
    /// connection could not be (no descriptor left for NIO's duplicate, a registration that
    /// failed) have links but no session, no writer and no usage; their links would vote
    /// and be ticked into nothing until the daemon stops. They go now, as those of clients
    /// that left during the handover, and watchers hear of each.
    /// - Returns: the links released.
    func releaseUnserved(_ adopted: Set<OwnerID>) -> [LinkID] {
        eventLoop.preconditionInEventLoop()
        let unserved = adopted.filter { sessions[$0] == nil }
        guard !unserved.isEmpty else { return [] }
        let at = now()
        let removed = shared.change { state -> [(link: LinkID, display: DisplayID)] in
            var removed: [(link: LinkID, display: DisplayID)] = []
            for owner in unserved.sorted(by: { $0.rawValue < $1.rawValue }) {
                removed += state.compositor.links(of: owner)
                _ = state.compositor.removeLinks(of: owner, at: at)
            }
            return removed
        }
        announceClosedConnectionLinks(removed, at: at)
        publishStatus()
        return removed.map(\.link)
    }

    /// A connection the previous daemon handed over: it keeps its owner id (so its links),
    /// its watches; `peer` is read again from the socket.
    func adopt(_ record: HandoverSession, peer: PeerCredentials, context: ChannelHandlerContext, destination: SocketWriter.Destination) -> Session {
        let session = makeSession(owner: record.owner, peer: peer, context: context, destination: destination, adopted: true)
        if let tickDescriptor = record.tickDescriptor { installTickSocket(tickDescriptor, on: session) }
        usage.add(peer.uid, links: shared.read { $0.compositor.linkCount(of: record.owner) })
        for watch in record.watches where watchers[watch] == nil {
            session.watches.insert(watch)
            watchers[watch] = session
        }
        usage.add(peer.uid, watches: session.watches.count)
        publishStatus()
        return session
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
package import FrameRateModel
import FrameRatePosix
package import FrameRateProtocol
package import Logging
package import NIOCore

/// The control plane: every session, watch and request, confined to one NIO event loop.
///
/// Model work goes through ``SharedModel``'s lock (microseconds per request); everything
/// else a request costs (parsing, encoding replies, logging, events to watchers) runs here,
/// outside the lock, where it can delay other control requests but never a tick: ticks
/// are written by the tick plane (``TickEngine``) on threads of their own.
package final class CompositorCore {
    enum Lifecycle {
        case running, stopping
        /// Handing every connection to the next daemon: closing one releases nothing.
        case handingOver
    }

    let eventLoop: any EventLoop
    package private(set) var configuration: ServerConfiguration
    var logger: Logger
    /// The model, the fan-out driver and the writers, shared with the tick plane.
    let shared: SharedModel
    /// Reads the daemon's clock (`CLOCK_MONOTONIC`; a stepped clock in tests): the one
    /// place the control plane learns the time.
    let now: @Sendable () -> MonotonicClock.Instant
    var sessions = OwnerTable<Session>()
    /// What each user holds, for the per-user limits.
    var usage = UserUsage()
    var watchers: [UInt64: Session] = [:]
    /// Tokens from `TickSocket/Open` not yet attached, by token: at most one per connection
    /// (``Session/tickSocketToken``), gone when it attaches or its connection closes.
    var tickSocketTokens: [String: OwnerID] = [:]
    var lifecycle = Lifecycle.running
    /// The admin group's id, resolved at start and on reload.
    package var adminGroupID: UInt32?
    let daemonUserID = geteuid()
    var lastWatch: UInt64 = 0
    let rpcConfiguration: JSONRPCInbound.Configuration
    /// Called with a one-line summary whenever it changes (the systemd status line).
    var statusObserver: ((String) -> Void)?
    /// The latest encoded `GetState` results, per viewer scope, the model generation they show
    /// and when they were built.
    var stateCache = EncodedStateCache<StateEdition>()
    /// Each link's JSON as the last `GetState` encoding wrote it, for the next one.
    var linkEncodings = EncodedLinkCache()
    /// Rate limits of the log lines for rejections that end a connection, per user.
    var connectionRejectionLogs = UserRejectionLogs<MonotonicClock.Instant>()
    /// "client rejected" lines (connections refused), at most 10 per user per 10 s.
    var refusalLogs = UserRejectionLogs<MonotonicClock.Instant>()
    /// "request rejected" lines (error replies), at most 10 per user per 10 s.
    var requestRejectionLogs = UserRejectionLogs<MonotonicClock.Instant>()
    /// Limits the "held back" lines (``linkHeldBack(display:_:)``) per user.
    var heldBackLogs = UserRejectionLogs<MonotonicClock.Instant>()
    /// The links whose held-back wait was announced to watchers (``linkHeldBack(display:_:)``):
    /// the tick each waits for, and whether the wait's journal line was logged. Only the
    /// end of that same wait is announced (``linkResumed(display:_:)``). An entry goes when
    /// its wait ends or its link does, so there are never more than links.
    var announcedHeldBack: [LinkID: (awaited: UInt64, logged: Bool)] = [:]
    /// "link registered" and "link released" lines, at most ``linkLogBurst`` per user per 10 s
    /// (``logLinkLifecycle(_:session:metadata:)``).
    var linkLogs = UserRejectionLogs<MonotonicClock.Instant>(burst: linkLogBurst, window: .seconds(10))
    /// A user's "link registered" and "link released" lines logged per 10 s: an application
    /// with a few dozen links logs each; a Register and Invalidate loop logs this many.
    static let linkLogBurst = 100
    /// "link stepped down" and "link stepped back up" lines (adaptive pacing), at most
    /// ``linkLogBurst`` per user per 10 s: a thousand adaptive links that keep overrunning
    /// and recovering step about once a second each.
    var adaptiveLogs = UserRejectionLogs<MonotonicClock.Instant>(burst: linkLogBurst, window: .seconds(10))
    /// "trace started" lines, at most 10 per user per 10 s (a Trace and close loop).
    var traceLogs = UserRejectionLogs<MonotonicClock.Instant>()
    /// "requests paced" lines, at most one per user per 10 s.
    var pacingLogs = UserRejectionLogs<MonotonicClock.Instant>(burst: 1, window: .seconds(10))
    /// Each unprivileged user's connections that do not read their replies; past the limit
    /// its other connections' requests wait.
    var unreadReplies = UnreadReplyLimit(limit: ServerConfiguration.Limits.unreadConnectionsPerUser)
    /// "requests wait for unread replies" lines, at most one per user per 10 s.
    var unreadReplyLogs = UserRejectionLogs<MonotonicClock.Instant>(burst: 1, window: .seconds(10))
    /// The tick plane's late wake-ups since start, and the limit on the journal lines that
    /// say so (``tickPlaneLate(lateness:busy:)``).
    var lateWakeTotal: UInt64 = 0
    var lateWakeLog = RejectionLogLimiter<MonotonicClock.Instant>()
    /// How much of the control loop each unprivileged user has taken (its requests wait
    /// while it is over its share or its reply rate).
    lazy var pacing = UserPacing(limits: configuration.limits.pacing)
    /// Paces the reads of every connection whose request line has grown long.
    lazy var longLineReads = LongLineReadPacer(eventLoop: eventLoop)
    /// The identity of closed connections whose links still hold residency shares, so
    /// GetState names them as they were. Pruned to the owners residency still names.
    var retiredPeers: [OwnerID: PeerCredentials] = [:]
    /// Running traces and the connection each belongs to.
    var traces: [UInt64: OwnerID] = [:]
    var lastTrace: UInt64 = 0
    /// Sends running traces their records (only while one runs).
    var traceFlush: RepeatedTask?
    /// Held-back and resumed links handed over by the tick plane and not announced yet,
    /// oldest first (``announcePending()``).
    var pendingAnnouncements = CircularBuffer<LinkAnnouncement>()
    /// Records taken from the recorder and not written yet, per trace: a flush writes at
    /// most ``traceRecordsPerTurn`` records a loop turn (``flushTraces()``).
    var traceBacklogs: [UInt64: TraceBacklog] = [:]
    /// The bounded-turn work scheduled to go on in a later turn (``continueInLaterTurn(_:)``).
    var laterTurnWork: Set<LaterTurnWork> = []
    /// Moves virtual time (`--clock virtual`); `nil` on a monotonic daemon.
    var virtualTime: VirtualTimeKeeper?

    package init(
        configuration: ServerConfiguration, shared: SharedModel, eventLoop: any EventLoop, logger: Logger,
        now: @escaping @Sendable () -> MonotonicClock.Instant
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.shared = shared
        self.now = now
        self.rpcConfiguration = JSONRPCInbound.Configuration(maximumBatchSize: configuration.limits.batchSize)
        self.adminGroupID = GroupDirectory.groupID(named: configuration.adminGroup)
    }

    /// The model state the daemon starts with: displays whose first vsync is `start`.
    package static func initialState(configuration: ServerConfiguration, start: MonotonicClock.Instant, watchdogInterval: Duration?) -> DaemonState {
        DaemonState(
            compositor: Compositor(displays: configuration.displays, governor: configuration.governor, start: start),
            driver: FanOutDriver(
                settings: .init(unwritableTimeout: configuration.limits.unwritableTimeout, watchdogInterval: watchdogInterval),
                start: start
            ),
            fanOutThreads: configuration.fanOutThreads
        )
    }

    /// Logs what start-up needs to say, publishes the first status.
    package func start() {
        eventLoop.preconditionInEventLoop()
        if adminGroupID == nil {
            logger.notice(
                "admin group '\(configuration.adminGroup)' does not exist: only root and the daemon's own user may change caps",
                metadata: ["group": "\(configuration.adminGroup)"]
            )
        }
        publishStatus()
    }

    /// Re-reads what can change without a restart: the admin group's id
    /// (the group may have been created or renumbered since start).
    func reload() {
        eventLoop.preconditionInEventLoop()
        let previous = adminGroupID
        adminGroupID = GroupDirectory.groupID(named: configuration.adminGroup)
        let group = adminGroupID.map { "gid \($0)" } ?? "missing"
        let change = previous != adminGroupID ? "changed" : "unchanged"
        logger.notice(
            "reloaded: admin group '\(configuration.adminGroup)' is \(group) (\(change))",
            metadata: ["event": "daemon-reloaded"]
        )
    }

    // MARK: Sessions

    /// A new connection from `peer`, written through `destination`; `nil` when refused
    /// (connection limit, or stopping): the refusal is sent and the connection closed.
    func open(peer: PeerCredentials, context: ChannelHandlerContext, destination: SocketWriter.Destination) -> Session? {
        if let message = refusal(of: peer) {
            // Refusing costs the user nothing (no connection is charged for it): the log lines
            // are limited per user, or a connect-and-close loop would flood the journal.
            if case .log(let suppressed) = refusalLogs.admit(uid: peer.uid, at: wallNow()) {
                let note = UserRejectionLogs<MonotonicClock.Instant>.note(suppressed: suppressed, uid: peer.uid, kind: .refusedConnection)
                logger.warning(
                    "client rejected: \(message)\(note)", metadata: peerMetadata(peer).merging(["event": "client-rejected"]) { $1 }
                )
            }
            var buffer = context.channel.allocator.buffer(capacity: 256)
            JSONRPCOutboundMessage.response(
                id: nil, result: .failure(.status(lifecycle == .running ? .resourceExhausted : .unavailable, message))
            ).writeLine(into: &buffer)
            // (The refusal is a JSON-RPC error naming the limit and its value.)
            let writer = SocketWriter(destination: destination, highWater: configuration.limits.outboundHighWater)
            writer.write(buffer)
            writer.close()
            context.close(promise: nil)
            return nil
        }
        let session = makeSession(owner: sessions.nextOwner(), peer: peer, context: context, destination: destination, adopted: false)
        logger.debug("client connected", metadata: peerMetadata(peer))
        publishStatus()
        return session
    }

    /// Stores a session for `owner` with its writer (a new connection, or one handed over).
    func makeSession(
        owner: OwnerID, peer: PeerCredentials, context: ChannelHandlerContext, destination: SocketWriter.Destination, adopted: Bool
    ) -> Session {
        let writer = SocketWriter(
            destination: destination, highWater: configuration.limits.outboundHighWater,
            gate: shared.gates.gate(slot: owner.tickGate.slot, tag: owner.tickGate.tag),
            observer: writerObserver(of: owner, pausesReads: true)
        )
        let session = Session(
            owner: owner, peer: peer, context: context, writer: writer, destination: destination, isPrivileged: isPrivileged(peer)
        )
        // A handed-over connection with links may have had its socket claimed by the
        // previous daemon's fan-out: too late for a tick socket (unless it came with one).
        // Without links it may still open one (its token did not survive the handover).
        session.hasRegisteredLinks = adopted && shared.read { $0.compositor.linkCount(of: owner) } > 0
        if adopted { sessions.adopt(session, for: owner) } else { sessions[owner] = session }
        usage.add(peer.uid, connections: 1)
        shared.update { $0.addWriter(writer, for: owner) }
        return session
    }

    /// Root, the daemon's own user and members of the admin group: exempt from the
    /// per-user limits, and the only ones who may use the reserved connections.
    func isPrivileged(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUserID { return true }
        if let adminGroupID, peer.isMember(of: adminGroupID) { return true }
        return false
    }

    /// Why a new connection from `peer` is refused, or `nil` when it is welcome.
    private func refusal(of peer: PeerCredentials) -> String? {
        let limits = configuration.limits
        guard lifecycle == .running else { return "framerated is shutting down" }
        if sessions.count >= limits.connections {
            return "framerated already serves \(limits.connections) connections (the limit, --max-connections); close idle clients or raise it"
        }
        guard !isPrivileged(peer) else { return nil }
        let open = limits.connections - limits.reservedConnections
        if sessions.count >= open {
            return "framerated serves \(open) connections, all it takes from unprivileged users "
                + "(--max-connections \(limits.connections), of which \(limits.reservedConnections) are reserved for root and the admin group)"
        }
        let held = usage[peer.uid].connections
        if held >= limits.connectionsPerUser {
            return "uid \(peer.uid) already holds \(held) connections (the per-user limit, --max-connections-per-user \(limits.connectionsPerUser)); close some first"
        }
        return nil
    }

    /// How a connection's writer reports to the tick plane (flush when writable, the
    /// unwritable set) and, with `pausesReads`, to the control loop (pause or resume
    /// reading requests: the writer of the replies; a tick socket's does not).
    func writerObserver(of owner: OwnerID, pausesReads: Bool) -> SocketWriter.Observer {
        let shared = self.shared
        let now = self.now
        let loop = NIOLoopBound(self, eventLoop: eventLoop)
        return SocketWriter.Observer(
            writabilityChanged: { writable in
                shared.change(shown: false) { $0.driver.writabilityChanged(of: owner, writable: writable, at: now()) }
                if pausesReads { loop.eventLoop.execute { loop.value.writabilityChanged(owner: owner, writable: writable) } }
            },
            needsFlush: { descriptor in shared.waiter.watchWritable(descriptor, token: owner.rawValue) },
            drained: { descriptor in shared.waiter.unwatch(descriptor) },
            closing: { descriptor in shared.waiter.unwatch(descriptor) },
            failed: { errno in loop.eventLoop.execute { loop.value.sendFailed(owner: owner, errno: errno) } }
        )
    }

    /// A send to `owner` failed (the writer discards everything from now on): the
    /// connection closes, and its links, watches and trace go with it. Usually the peer
    /// has closed and NIO is about to say so; but a peer that shut down only its reading
    /// side (`shutdown(SHUT_RD)`) leaves the daemon's end readable and never hung up, and
    /// without this its links would vote and tick for as long as it kept the socket open,
    /// past the unwritable timeout (which only counts bytes queued, and a failed writer
    /// queues none).
    func sendFailed(owner: OwnerID, errno: Int32) {
        guard let session = sessions[owner] else { return }
        logger.debug(
            "a send to the client failed (errno \(errno)): closing its connection",
            metadata: peerMetadata(session.peer).merging(["event": "client-send-failed"]) { $1 }
        )
        session.context.close(promise: nil)
    }

    /// The connection closed (for any reason): its links and watches go, the display re-arbitrates now.
    func close(_ session: Session) {
        if lifecycle == .handingOver {
            // The links and watches go on in the next daemon: only this process's copy closes.
            session.writer.close()
            session.tickWriter?.close()
            return
        }
        guard sessions.removeValue(forKey: session.owner) != nil else { return }
        if let token = session.tickSocketToken { tickSocketTokens[token] = nil }
        if !session.isPrivileged { resume(unreadReplies.closed(session.owner, uid: session.peer.uid)) }
        for watch in session.watches { watchers[watch] = nil }
        endTraces(of: session.owner)
        usage.add(session.peer.uid, connections: -1, watches: -session.watches.count)
        let at = now()
        let (removed, letGo) = shared.change { state -> ([(link: LinkID, display: DisplayID)], [SocketWriter]) in
            let links = state.compositor.links(of: session.owner)
            _ = state.compositor.removeLinks(of: session.owner, at: at)
            let letGo = state.removeWriter(of: session.owner)
            state.driver.closed(session.owner)
            return (links, letGo)
        }
        withExtendedLifetime(letGo) {}  // dropped here, outside the model lock
        session.writer.close()
        session.tickWriter?.close()
        usage.add(session.peer.uid, links: -removed.count)
        if !removed.isEmpty { retire(session) }
        for (link, _) in removed { logRelease(link, session: session, reason: "connection closed") }
        announceClosedConnectionLinks(removed, at: at)
        logger.debug("client disconnected", metadata: peerMetadata(session.peer))
        publishStatus()
        virtualTimeMayAdvance()
    }

    /// Tells watchers and the trace that links went with their connection (`removed`, as
    /// the model listed them before removing them, at `at`), and forgets their announced waits.
    func announceClosedConnectionLinks(_ removed: [(link: LinkID, display: DisplayID)], at: MonotonicClock.Instant) {
        for (link, display) in removed {
            announcedHeldBack[link] = nil
            emit(.linkRemoved(display: display, link: link, reason: "connection closed"))
        }
        trace {
            removed.map { TraceRecord.linkRemoved(display: $0.display, at: at.seconds, link: $0.link) }
                + decisionRecords(Array(Set(removed.map(\.display))), at: at)
        }
    }

    /// Keeps a closed connection's identity for the residency its links earned; drops the
    /// identities residency no longer names once there are more than ``retiredPeerLimit``.
    private func retire(_ session: Session) {
        retiredPeers[session.owner] = session.peer
        guard retiredPeers.count > Self.retiredPeerLimit else { return }
        // Only the ledgers' names, under the lock: a snapshot would build every link's.
        let named = shared.read { $0.compositor.ownersNamedByResidency }
        retiredPeers = retiredPeers.filter { named.contains($0.key) }
    }

    /// Retired identities kept before pruning: the residency ledgers keep at most 256 ended
    /// links by name per display, so this bounds the table.
    static let retiredPeerLimit = 1024

    func connectionError(_ error: any Error, session: Session?) {
        logger.debug("connection error: \(error)", metadata: session.map { peerMetadata($0.peer) } ?? [:])
    }

    func rejectOversizedLine(limit: Int, from session: Session) {
        logConnectionRejection("line longer than \(limit) bytes; closing the connection", session: session)
    }

    func rejectPartialLine(timeout: Duration, from session: Session) {
        logConnectionRejection("a line took longer than \(timeout) to arrive; closing the connection", session: session)
    }

    /// Logs a rejection that ends `session`'s connection, at most 10 per user per 10 s
    /// (``UserRejectionLogs``): a user cannot flood the log by opening connections.
    private func logConnectionRejection(_ what: String, session: Session) {
        guard case .log(let suppressed) = connectionRejectionLogs.admit(uid: session.peer.uid, at: wallNow()) else { return }
        logger.warning(
            "request rejected: \(what)\(UserRejectionLogs<MonotonicClock.Instant>.note(suppressed: suppressed, uid: session.peer.uid))",
            metadata: peerMetadata(session.peer).merging(["event": "request-rejected"]) { $1 }
        )
    }

    /// A writer crossed its high-water mark or drained (reported by the writer, hopped here):
    /// a connection whose reads were paused for it resumes, and so do its user's connections
    /// that waited for its unread replies (``UnreadReplyLimit``).
    func writabilityChanged(owner: OwnerID, writable: Bool) {
        guard let session = sessions[owner] else { return }
        if !session.isPrivileged {
            resume(unreadReplies.writabilityChanged(of: owner, uid: session.peer.uid, writable: writable))
        }
        if writable { session.resume?() }
    }

    /// Resumes the connections `owners` (those still open).
    func resume(_ owners: Set<OwnerID>) {
        for owner in owners { sessions[owner]?.resume?() }
    }

    /// The tick plane gave up on a connection that stopped reading.
    package func disconnectUnwritable(owner: OwnerID) {
        guard let session = sessions[owner] else { return }
        logger.warning(
            "disconnecting a client that has not read for \(configuration.limits.unwritableTimeout): its ticks were being dropped",
            metadata: peerMetadata(session.peer).merging(["event": "client-disconnected-unwritable"]) { $1 }
        )
        session.context.close(promise: nil)
    }

    // MARK: Status

    /// `display 0: 120 Hz (3 links); 2 clients`.
    var statusLine: String {
        // Rates and counts only: this runs on every Register and close, so it must not
        // build a snapshot of every link.
        let displays = shared.read { state in
            state.compositor.displayIDs.map { id in
                let rate = (try? state.compositor.refreshRate(of: id)) ?? 0
                let count = (try? state.compositor.linkCount(of: id)) ?? 0
                return "display \(id.rawValue): \(FrameRateMath.format(rate)) Hz (\(count) link\(count == 1 ? "" : "s"))"
            }
        }
        return displays.joined(separator: ", ") + "; \(sessions.count) client\(sessions.count == 1 ? "" : "s")"
    }

    func publishStatus() {
        statusObserver?(statusLine)
    }

    func peerMetadata(_ peer: PeerCredentials) -> Logger.Metadata {
        ["pid": "\(peer.pid)", "uid": "\(peer.uid)", "command": "\(peer.command ?? "?")"]
    }

    func logRelease(_ link: LinkID, session: Session, reason: String) {
        logLinkLifecycle(
            "link \(link.rawValue) released (\(reason))", session: session,
            metadata: ["link": "\(link.rawValue)", "event": "link-released", "reason": "\(reason)"]
        )
    }

    /// Logs a link's registration or release (with the peer's fields), at most
    /// ``linkLogBurst`` lines per user per 10 s: every other line a client can repeat is
    /// limited per user too, and a Register and Invalidate loop logged two lines a request,
    /// thousands a second, until journald's own limit dropped everyone's messages with
    /// them. The next line logged says how many were left out.
    func logLinkLifecycle(_ message: String, session: Session, metadata: Logger.Metadata) {
        logLimited(message, level: .info, session: session, metadata: metadata, limits: &linkLogs, kind: .linkLifecycle)
    }

    /// Logs a line a user can repeat at will (with the peer's fields) if `limits` admits
    /// it for the user at the wall clock's now, with the note of the lines left out since.
    func logLimited(
        _ message: String, level: Logger.Level, session: Session, metadata: Logger.Metadata,
        limits: inout UserRejectionLogs<MonotonicClock.Instant>, kind: UserRejectionLogs<MonotonicClock.Instant>.Kind
    ) {
        guard case .log(let suppressed) = limits.admit(uid: session.peer.uid, at: wallNow()) else { return }
        let note = UserRejectionLogs<MonotonicClock.Instant>.note(suppressed: suppressed, uid: session.peer.uid, kind: kind)
        logger.log(level: level, "\(message)\(note)", metadata: peerMetadata(session.peer).merging(metadata) { $1 })
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import Logging
import NIOCore

/// The daemon's state and behaviour, confined to one event loop: the model,
/// every session, watches, the vsync timers and the tick fan-out.
///
/// Everything here runs on ``eventLoop``: requests are handled synchronously
/// as their lines arrive (each is a few microseconds of pure model work), and
/// ticks are written from the vsync timer. Nothing is shared across threads,
/// so there are no locks. The `ServiceGroup` (async) starts and stops it.
final class CompositorCore {
    enum Lifecycle { case running, stopping }

    let eventLoop: any EventLoop
    private(set) var configuration: ServerConfiguration
    var logger: Logger
    var compositor: Compositor<MonotonicClock>
    var sessions = SessionTable()
    /// Connections above their outbound high-water mark; almost always empty, so the
    /// vsync's per-link "can deliver" test is one `isEmpty` check.
    var unwritableOwners: Set<OwnerID> = []
    /// The scratch buffer single-link connections' tick lines are encoded into (reused).
    var fanOutLine: ByteBuffer?
    /// Whether a request waits on some connection (for a long fan-out to yield to).
    let inputMonitor = InputMonitor()
    var watchers: [UInt64: Session] = [:]
    /// Each display's next vsync, or the rest of its current fan-out.
    var vsyncTimers: [DisplayID: Scheduled<Void>] = [:]
    var lifecycle = Lifecycle.running
    /// The admin group's id, resolved at start and on reload.
    var adminGroupID: UInt32?
    let daemonUserID = geteuid()
    var lastWatch: UInt64 = 0
    let rpcConfiguration: JSONRPCInbound.Configuration
    /// Called with a one-line summary whenever it changes (the systemd status line).
    var statusObserver: ((String) -> Void)?
    /// Called once per processed vsync (the systemd watchdog rides on it).
    var vsyncObserver: (() -> Void)?

    init(configuration: ServerConfiguration, eventLoop: any EventLoop, logger: Logger) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.compositor = Compositor(displays: configuration.displays, governor: configuration.governor, start: MonotonicClock.now)
        self.rpcConfiguration = JSONRPCInbound.Configuration(maximumBatchSize: configuration.limits.batchSize)
        self.adminGroupID = GroupDirectory.groupID(named: configuration.adminGroup)
    }

    /// Starts every display's vsync timer.
    func start() {
        eventLoop.preconditionInEventLoop()
        for display in compositor.displayIDs { scheduleVsync(of: display) }
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

    /// A new connection from `peer`; `nil` when refused (connection limit, or stopping).
    func open(peer: PeerCredentials, context: ChannelHandlerContext, descriptor: Int32? = nil) -> Session? {
        guard lifecycle == .running, sessions.count < configuration.limits.connections else {
            let message =
                lifecycle == .running
                ? "framerated already serves \(configuration.limits.connections) connections (the limit); close idle clients or raise --max-connections"
                : "framerated is shutting down"
            logger.warning(
                "client rejected: \(message)", metadata: peerMetadata(peer).merging(["event": "client-rejected"]) { $1 }
            )
            var buffer = context.channel.allocator.buffer(capacity: 256)
            JSONRPCOutboundMessage.response(
                id: nil, result: .failure(.status(lifecycle == .running ? .resourceExhausted : .unavailable, message))
            ).writeLine(into: &buffer)
            context.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return nil
        }
        let session = Session(owner: sessions.nextOwner(), peer: peer, context: context, descriptor: descriptor)
        sessions[session.owner] = session
        if let descriptor { inputMonitor?.watch(descriptor) }
        logger.debug("client connected", metadata: peerMetadata(peer))
        publishStatus()
        return session
    }

    /// The connection closed (for any reason): its links and watches go, the display re-arbitrates now.
    func close(_ session: Session) {
        guard sessions.removeValue(forKey: session.owner) != nil else { return }
        session.isClosed = true
        unwritableOwners.remove(session.owner)
        session.unwritableDeadline?.cancel()
        for watch in session.watches { watchers[watch] = nil }
        let removed = compositor.removeLinks(of: session.owner, at: MonotonicClock.now)
        for link in removed {
            logRelease(link, session: session, reason: "connection closed")
        }
        for link in removed {
            emit(.linkRemoved(display: session.links[link] ?? compositor.displayIDs[0], link: link, reason: "connection closed"))
        }
        logger.debug("client disconnected", metadata: peerMetadata(session.peer))
        publishStatus()
    }

    /// The peer shut down its sending side: nothing more will be read from it.
    func inputClosed(_ session: Session) {
        if let descriptor = session.descriptor { inputMonitor?.unwatch(descriptor) }
    }

    func connectionError(_ error: any Error, session: Session?) {
        logger.debug("connection error: \(error)", metadata: session.map { peerMetadata($0.peer) } ?? [:])
    }

    func rejectOversizedLine(limit: Int, from session: Session) {
        logger.warning(
            "request rejected: line longer than \(limit) bytes; closing the connection",
            metadata: peerMetadata(session.peer).merging(["event": "request-rejected"]) { $1 }
        )
    }

    /// Writability changed: update the unwritable set, start or cancel the unwritable-too-long timer.
    func writabilityChanged(_ session: Session) {
        _ = session.refreshWritability()
        if session.isWritable {
            unwritableOwners.remove(session.owner)
        } else if sessions[session.owner] != nil {
            unwritableOwners.insert(session.owner)
        }
        if session.isWritable {
            session.unwritableDeadline?.cancel()
            session.unwritableDeadline = nil
            return
        }
        guard session.unwritableDeadline == nil else { return }
        let timeout = configuration.limits.unwritableTimeout
        session.unwritableDeadline = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(WireTime.nanoseconds(of: timeout))) {
            // The session is captured strongly (close cancels this task): a weak reference
            // would move its reference count to a side table, slowing the tick path.
            [weak self] in
            guard let self, self.sessions[session.owner] === session, !session.context.channel.isWritable else { return }
            self.logger.warning(
                "disconnecting a client that has not read for \(timeout): its ticks were being dropped",
                metadata: self.peerMetadata(session.peer).merging(["event": "client-disconnected-unwritable"]) { $1 }
            )
            session.context.close(promise: nil)
        }
    }

    // MARK: Status

    /// `display 0: 120 Hz (3 links); 2 clients`.
    var statusLine: String {
        // Rates and counts only: this runs on every Register and close, so it must not
        // build a snapshot of every link.
        let displays = compositor.displayIDs.map { id in
            let rate = (try? compositor.refreshRate(of: id)) ?? 0
            let count = (try? compositor.linkCount(of: id)) ?? 0
            return "display \(id.rawValue): \(FrameRateMath.format(rate)) Hz (\(count) link\(count == 1 ? "" : "s"))"
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
        logger.info(
            "link \(link.rawValue) released (\(reason))",
            metadata: peerMetadata(session.peer).merging(["link": "\(link.rawValue)", "event": "link-released", "reason": "\(reason)"]) { $1 }
        )
    }
}

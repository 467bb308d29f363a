import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOPosix
import Synchronization

/// The state behind a ``FrameRateConnection``: its current session (channel
/// and router), and, when it reconnects, the reconnect loop and the
/// re-registration of every live link and watch.
///
/// **Why the reconnect loop runs on NIO, not in a task.** The loop is a chain of
/// event-loop callbacks: the dropped channel's `closeFuture` schedules the first
/// attempt with `EventLoop.scheduleTask(in:)`, an attempt is a `ClientBootstrap`
/// connect future, its failure schedules the next attempt and its success
/// re-registers over the new channel with callback-completed calls. No `Task` is
/// spawned, so nothing outlives the connection unstructured: the only pending
/// work is one `Scheduled` timer or one connect future at a time, both owned by
/// this object's state, cancelled or ignored once ``close()`` (or the
/// connection's `deinit`) moves it to `closed`; and after a reconnect, the
/// re-registrations' deadline, cancelled when that session closes. The application needs no task of
/// its own to keep the connection alive, and a `for await` over a link's ticks
/// simply waits through the outage.
final class ConnectionCore: Sendable {
    /// Opens a channel to the daemon whose lines go to the given router.
    typealias Connector = @Sendable (ClientRouter) -> EventLoopFuture<any Channel>

    /// One connection to one daemon.
    struct Session: Sendable {
        let channel: any Channel
        let router: ClientRouter
        /// The reconnect attempt that made this connection (0: the first connection).
        var attempt: Int = 0
    }

    private enum Phase: Sendable {
        /// Connected: calls go to this session.
        case connected(Session)
        /// The connection dropped; attempt `attempt` (0 is the first) is scheduled
        /// (`timer`) or connecting.
        case reconnecting(attempt: Int, timer: Scheduled<Void>?)
        /// Closed for good.
        case closed
    }

    private struct State: Sendable {
        var phase: Phase
        var reconnects = 0
        /// When the current outage began: from the drop until a session has registered
        /// everything again (`nil` otherwise). Attempts that failed keep it.
        var lostAt: ContinuousClock.Instant?
        /// The session (by its router) that ``failAttempt(_:)`` closed: its end counts as
        /// a failed attempt even though the daemon answered on it.
        var failedSession: ObjectIdentifier?
    }

    /// Told when the connection drops and when it is back (``ConnectionChange``).
    typealias Observer = @Sendable (ConnectionChange) -> Void

    /// The reconnect policy, or `nil` for a connection that closes for good when it drops.
    let policy: ReconnectPolicy?
    /// The live links and watches, across sessions.
    let registry: StreamRegistry
    /// How long a call waits for its answer (`nil`: no limit); then it fails with
    /// ``FrameRateClientError/timedOut(method:after:)``. A reconnect's re-registrations
    /// wait as long; then that session is closed and the next attempt made (``restore(on:)``).
    let requestTimeout: Duration?
    private let connector: Connector?
    private let state: Mutex<State>
    private let observer: Observer?

    /// A core whose first session is `session`; `connector` opens the next ones
    /// (needed when `policy` is set); `observer` hears of each drop and return;
    /// calls and re-registrations wait at most `requestTimeout` for their answers.
    init(
        session: Session, policy: ReconnectPolicy?, connector: Connector?, observer: Observer? = nil,
        requestTimeout: Duration? = FrameRateConnection.defaultRequestTimeout
    ) {
        precondition(policy == nil || connector != nil, "a reconnecting connection needs a connector")
        self.policy = policy
        self.requestTimeout = requestTimeout
        self.observer = observer
        self.registry = session.router.registry
        self.connector = connector
        self.state = Mutex(State(phase: .connected(session)))
        observe(session)
    }

    /// A connector over a Unix socket at `path`, with the client's pipeline; each
    /// connection (the first and every reconnect) is kept only when `trust`
    /// trusts the process listening there (``DaemonTrust/verify(_:)``).
    static func connector(path: String, group: any EventLoopGroup, trust: DaemonTrust) -> Connector {
        { router in
            ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(NDJSONLineDecoder()),
                            ClientChannelHandler(router: router)
                        )
                    }
                }
                .connect(unixDomainSocketPath: path)
                .flatMap { trust.verify($0) }
        }
    }

    // MARK: - State

    /// The session calls go to now.
    /// - Throws: ``FrameRateClientError/connectionClosed`` while reconnecting or once closed.
    func currentSession() throws(FrameRateClientError) -> Session {
        guard case .connected(let session) = state.withLock({ $0.phase }) else { throw .connectionClosed }
        return session
    }

    /// The current session if it is `router`'s.
    func session(for router: ClientRouter) -> Session? {
        guard case .connected(let session) = state.withLock({ $0.phase }), session.router === router else { return nil }
        return session
    }

    /// Whether the connection is closed for good.
    var isClosed: Bool {
        switch state.withLock({ $0.phase }) {
        case .connected(let session): policy == nil && session.router.isClosed
        case .reconnecting: false
        case .closed: true
        }
    }

    /// Whether a session is up (and has not noticed it dropped yet).
    var isConnected: Bool {
        guard case .connected(let session) = state.withLock({ $0.phase }) else { return false }
        return !session.router.isClosed
    }

    /// Whether the connection reconnects (and is not closed for good).
    var reconnects: Bool { policy != nil && !isClosed }

    /// How many times the connection was re-established.
    var reconnectCount: Int { state.withLock { $0.reconnects } }

    /// Closes for good: no more reconnects; returns the session to close, if any.
    /// Streams are not finished yet (see ``finishAll()``).
    func markClosed() -> Session? {
        let (session, timer): (Session?, Scheduled<Void>?) = state.withLock { state in
            defer { state.phase = .closed }
            switch state.phase {
            case .connected(let session): return (session, nil)
            case .reconnecting(_, let timer): return (nil, timer)
            case .closed: return (nil, nil)
            }
        }
        timer?.cancel()
        return session
    }

    /// Closes for good without waiting: the `deinit` path.
    func closeNow() {
        if let session = markClosed() {
            session.channel.close(promise: nil)
            session.router.shutDown(reason: .connectionClosed)
        }
        finishAll()
    }

    /// Ends every live link (``DisplayLinkEnd/connectionClosed``) and watch.
    func finishAll() {
        let (links, watches) = registry.live
        for link in links { link.finish(end: .connectionClosed) }
        for watch in watches { watch.finish() }
    }

    // MARK: - The reconnect loop

    private func observe(_ session: Session) {
        session.channel.closeFuture.whenComplete { _ in self.sessionEnded(session) }
    }

    /// `session`'s channel closed (the daemon went away, or ``close()``).
    private func sessionEnded(_ session: Session) {
        session.router.shutDown(reason: .connectionClosed)
        enum Next { case nothing, finish, reconnect(attempt: Int, outageBegins: Bool) }
        let next: Next = state.withLock { state in
            guard case .connected(let current) = state.phase, current.router === session.router else { return .nothing }
            guard policy != nil else {
                state.phase = .closed
                return .finish
            }
            // The backoff starts over only after a connection that worked (the daemon
            // answered or ticked). One the daemon accepted and closed at once, as at its
            // connection limit, or whose re-registrations failed (``failAttempt(_:)``),
            // counts as a failed attempt, so the waits keep growing (docs/protocol.md).
            let failed = state.failedSession == ObjectIdentifier(session.router)
            let attempt = session.router.hasDelivered && !failed ? 0 : session.attempt + 1
            state.phase = .reconnecting(attempt: attempt, timer: nil)
            state.failedSession = nil
            let outageBegins = state.lostAt == nil
            if outageBegins { state.lostAt = ContinuousClock.now }
            return .reconnect(attempt: attempt, outageBegins: outageBegins)
        }
        switch next {
        case .nothing: break
        case .finish: finishAll()
        case .reconnect(let attempt, let outageBegins):
            // A failed attempt is part of the outage the observer already heard of.
            if outageBegins { observer?(.lost) }
            schedule(attempt: attempt, on: session.channel.eventLoop)
        }
    }

    /// Ends `session` as a failed reconnect attempt (its re-registrations were not
    /// answered in time, or the daemon answered `UNAVAILABLE`): closes it, and the next
    /// attempt comes after a longer wait, never attempt 0 again.
    private func failAttempt(_ session: Session) {
        // Only while the session is open: an ended one's router may be gone, and its
        // identifier reused by a later router.
        guard !session.router.isClosed else { return }
        state.withLock { $0.failedSession = ObjectIdentifier(session.router) }
        session.channel.close(promise: nil)
    }

    /// Whether `router`'s session ended, or is ending as a failed attempt.
    private func hasFailed(_ router: ClientRouter) -> Bool {
        router.isClosed || state.withLock { $0.failedSession == ObjectIdentifier(router) }
    }

    /// Schedules attempt `attempt` after the policy's delay, or gives up.
    private func schedule(attempt: Int, on loop: any EventLoop) {
        guard let policy else { return }
        guard policy.allowsAttempt(attempt) else {
            let gaveUp = state.withLock { state -> Bool in
                guard case .reconnecting = state.phase else { return false }
                state.phase = .closed
                return true
            }
            if gaveUp { finishAll() }
            return
        }
        let delay = policy.delay(attempt: attempt, random: Double.random(in: 0..<1))
        let timer = loop.scheduleTask(in: TimeAmount(delay)) { self.connect(attempt: attempt, loop: loop) }
        let waiting = state.withLock { state -> Bool in
            guard case .reconnecting = state.phase else { return false }
            state.phase = .reconnecting(attempt: attempt, timer: timer)
            return true
        }
        if !waiting { timer.cancel() }
    }

    /// Makes attempt `attempt`.
    private func connect(attempt: Int, loop: any EventLoop) {
        guard let connector, case .reconnecting = state.withLock({ $0.phase }) else { return }
        let router = ClientRouter(registry: registry, keepsStreamsOnClose: true)
        connector(router).whenComplete { result in
            switch result {
            case .success(let channel): self.connected(Session(channel: channel, router: router, attempt: attempt))
            case .failure: self.schedule(attempt: attempt + 1, on: loop)
            }
        }
    }

    /// A new session is up: calls go to it, and every live link and watch is registered again on it.
    private func connected(_ session: Session) {
        let accepted = state.withLock { state -> Bool in
            guard case .reconnecting = state.phase else { return false }
            state.phase = .connected(session)
            state.reconnects += 1
            return true
        }
        guard accepted else {
            session.channel.close(promise: nil)
            return
        }
        observe(session)
        restore(on: session)
    }

    // MARK: - Re-registration

    /// Registers every live link again (with its current range, paused flag,
    /// label, display and entitlement), then starts every live watch again, in
    /// id order, pipelined on `session`.
    ///
    /// The batch waits at most ``requestTimeout`` for its answers, as a call does. A
    /// daemon that accepts the connection and then leaves a re-registration unanswered
    /// (stopped with `SIGSTOP`, wedged, overloaded), or answers one with `UNAVAILABLE`
    /// (stopping again), fails this reconnect attempt (``failAttempt(_:)``): the session
    /// is closed, which releases on the daemon whatever the requests created, keeps the
    /// links and watches, and makes the next attempt with a longer wait
    /// (``ReconnectPolicy/maximumAttempts`` still ends it). The Python client does the
    /// same; the C client waits for each request in turn.
    func restore(on session: Session) {
        let router = session.router
        let (links, watches) = registry.live
        var requests: [(id: Int64, message: JSONRPCOutboundMessage)] = []
        // The ends the daemon's refusals call for (say NOT_FOUND: it has no such display),
        // applied only once every answer is in and the session stands: a refusal met by
        // an attempt that then fails is forgotten, and the next attempt registers the
        // link (or watch) again.
        let refusals = Mutex<[@Sendable () -> Void]>([])
        let refused: @Sendable ((@Sendable () -> Void)?) -> Void = { end in
            if let end { refusals.withLock { $0.append(end) } }
        }
        let report = restoredReport(expecting: links.count + watches.count, on: router) {
            for end in refusals.withLock({ ends in defer { ends = [] }; return ends }) { end() }
        }
        // Before the report: the last answer must not announce a session about to close.
        let failIfUnavailable: @Sendable (Result<JSONValue, FrameRateClientError>) -> Void = { [weak self] result in
            if case .failure(let error) = result, error.status == .unavailable { self?.failAttempt(session) }
        }
        for record in links {
            guard let request = record.beginReregistering(on: router) else {
                report(nil, false)
                continue
            }
            let id = router.makeRequestID()
            let refusal = router.enqueue(id: id, route: .link(record, restoring: true)) { result in
                refused(Self.reregistered(record, result: result, on: router))
                failIfUnavailable(result)
                report(record.snapshot.id, (try? result.get()) != nil)
            }
            if refusal != nil { return }  // the session is already gone; the next one restores
            requests.append((id, .request(id: .number(JSONNumber(id)), method: V1Method.register.rawValue, params: request.jsonValue)))
        }
        for record in watches {
            guard record.beginRewatching(on: router) else {
                report(nil, false)
                continue
            }
            let id = router.makeRequestID()
            let refusal = router.enqueue(id: id, route: .watch(record, restoring: true)) { result in
                refused(Self.rewatched(record, result: result, on: router))
                failIfUnavailable(result)
                report(nil, (try? result.get()) != nil)
            }
            if refusal != nil { return }
            requests.append((id, .request(id: .number(JSONNumber(id)), method: V1Method.watch.rawValue, params: JSONValue.object([:]))))
        }
        guard !requests.isEmpty else { return }
        for (id, message) in requests {
            var buffer = session.channel.allocator.buffer(capacity: 160)
            message.writeLine(into: &buffer)
            session.channel.write(buffer).whenFailure { _ in router.fail(id: id, with: .connectionClosed) }
        }
        session.channel.flush()
        guard let timeout = requestTimeout else { return }
        // One deadline for the whole pipelined batch, cancelled when the session closes.
        // Closing the session fails the calls still pending with `connectionClosed`, which
        // keeps their links and watches for the next connection (``isTransient(_:on:)``).
        let sent = requests.map(\.id)
        let deadline = session.channel.eventLoop.scheduleTask(in: .nanoseconds(WireTime.nanoseconds(of: timeout))) { [weak self] in
            if sent.contains(where: router.isAwaitingAnswer(to:)) { self?.failAttempt(session) }
        }
        session.channel.closeFuture.whenComplete { _ in deadline.cancel() }
    }

    /// Counts the re-registrations' replies on `router`'s session and, once all are in,
    /// runs `succeeded` and tells the observer, with the whole outage (failed attempts
    /// included), unless the session failed meanwhile: then a later one does. Returns
    /// `report(link, succeeded)`, to call per link (with its id) or watch (`nil`).
    private func restoredReport(
        expecting count: Int, on router: ClientRouter, succeeded: @escaping @Sendable () -> Void
    ) -> @Sendable (LinkID?, Bool) -> Void {
        let observer = self.observer
        let announce: @Sendable ([LinkID], Int) -> Void = { [weak self] links, watches in
            guard let self, !self.hasFailed(router) else { return }
            succeeded()
            // The outage ends here, observed or not.
            let lostAt = self.state.withLock { state in
                defer { state.lostAt = nil }
                return state.lostAt
            }
            observer?(.restored(outage: lostAt.map { $0.duration(to: .now) } ?? .zero, links: links, watches: watches))
        }
        let tally = Mutex<(left: Int, links: [LinkID], watches: Int)>((count, [], 0))
        let report: @Sendable (LinkID?, Bool) -> Void = { link, succeeded in
            let done = tally.withLock { tally -> (links: [LinkID], watches: Int)? in
                guard tally.left > 0 else { return nil }
                tally.left -= 1
                if succeeded {
                    if let link { tally.links.append(link) } else { tally.watches += 1 }
                }
                return tally.left == 0 ? (tally.links.sorted(), tally.watches) : nil
            }
            if let done { announce(done.links, done.watches) }
        }
        if count == 0 { announce([], 0) }
        return report
    }

    /// Whether a failed re-registration is retried on the next connection: the
    /// connection closed under it, or the daemon is stopping (`UNAVAILABLE`).
    private static func isTransient(_ error: FrameRateClientError, on router: ClientRouter) -> Bool {
        router.isClosed || error.status == .unavailable
    }

    /// Takes a re-registration's answer; for a refusal, returns the link's end, to apply
    /// if the attempt succeeds.
    private static func reregistered(
        _ record: LinkRecord, result: Result<JSONValue, FrameRateClientError>, on router: ClientRouter
    ) -> (@Sendable () -> Void)? {
        switch result {
        case .success(let value):
            if let status = try? LinkStatusResult(json: value) { record.didUpdate(status: status, range: nil, paused: nil) }
        case .failure(let error):
            if !isTransient(error, on: router) { return { _ = record.finish(end: .reregistrationFailed(error)) } }
        }
        return nil
    }

    /// Takes a new subscription's answer, as ``reregistered(_:result:on:)``.
    private static func rewatched(
        _ record: WatchRecord, result: Result<JSONValue, FrameRateClientError>, on router: ClientRouter
    ) -> (@Sendable () -> Void)? {
        switch result {
        case .success(let value):
            guard let id = record.snapshot.id, record.target != nil else { return nil }
            var params: JSONObject = ["watch": .number(JSONNumber(Int64(id))), "kind": .string(CompositorWatchEvent.resynchronizedKind)]
            if let state = value["state"] { params.append(key: "state", value: state) }
            record.deliver(CompositorWatchEvent(watch: id, params: .object(params)))
        case .failure(let error):
            if !isTransient(error, on: router) { return { record.finish() } }
        }
        return nil
    }
}

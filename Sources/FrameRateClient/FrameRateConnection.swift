public import FrameRateProtocol
public import NIOCore
import NIOPosix
import Synchronization

/// One connection to framerated: newline-delimited JSON-RPC 2.0 over its Unix
/// stream socket. The one client used by `framectl`, the integration tests and
/// the benchmark.
///
/// Calls may be made concurrently from any task; responses are matched to
/// calls by id. Links registered (``register(_:tickBufferLimit:)``) and watches
/// started (``watch(eventBufferLimit:)``) belong to this connection: the daemon
/// releases them when it closes.
///
/// **Without reconnect** (the default), when the connection closes for any
/// reason every pending call fails with ``FrameRateClientError/connectionClosed``
/// (or the protocol error that closed it) and every tick and event stream finishes.
///
/// **With reconnect** (`connect(…, reconnect: .default)`), a connection that
/// drops (the daemon stopped or restarted: its `Closed` notifications with
/// status `UNAVAILABLE` and the closed socket are taken as that) is made again
/// with the ``ReconnectPolicy``'s backoff, and every live link is registered
/// again with its current range, paused flag, label, display and entitlement,
/// and every watch started again:
///
/// - a ``DisplayLinkHandle`` and its ``DisplayLinkHandle/ticks`` stream carry on:
///   its ``DisplayLinkHandle/id`` stays the same (the daemon's new id is
///   ``DisplayLinkHandle/daemonID``), ticks carry that id, and the outage shows
///   as one tick whose `skipped` counts the link's intervals that passed (see
///   ``DisplayLinkHandle/ticks`` for the exact rule), with `sequence` continuing
///   from the application's last one; ``DisplayLinkHandle/frameDone(sequence:contentVelocity:)``
///   takes those sequences and maps them back to the daemon's;
/// - a ``CompositorWatch`` carries on with the same id and event stream, which
///   first gets one synthetic event of kind ``CompositorWatchEvent/resynchronizedKind``
///   carrying the new daemon's full state (events during the outage are lost);
/// - calls pending when the connection drops, and calls made while it is down,
///   fail at once with ``FrameRateClientError/connectionClosed`` (nothing waits for
///   the daemon to come back); except that ``DisplayLinkHandle/frameDone(sequence:contentVelocity:)``
///   is dropped silently and ``DisplayLinkHandle/invalidate()`` /
///   ``CompositorWatch/unwatch()`` succeed locally (the daemon has already
///   released the link), so a render loop sees no error;
/// - a link the daemon refuses to register again (e.g. its display is gone)
///   ends with ``DisplayLinkEnd/reregistrationFailed(_:)``: its tick stream
///   finishes and ``DisplayLinkHandle/end`` carries the daemon's error. A daemon
///   that leaves a re-registration unanswered for ``requestTimeout`` fails that
///   attempt: the connection is closed and made again with the backoff. Updates
///   that failed during the outage are not replayed: a link comes back with the
///   last range and paused flag the daemon accepted.
///
/// The connection closes when ``close()`` is called or when the last reference
/// to it goes away; each ``DisplayLinkHandle`` and ``CompositorWatch`` keeps
/// its connection alive.
///
/// ```swift
/// let connection = try await FrameRateConnection.connect(reconnect: .default)
/// let link = try await connection.register(range: FrameRateRange(minimum: 80, maximum: 120, preferred: 120))
/// for await tick in link.ticks {
///     let secondsLeft = tick.workingTimeLeft()   // until targetTimestamp, CLOCK_MONOTONIC
///     // … render, advancing animations by (tick.skipped + 1) / tick.callbackRate seconds, then:
///     try await link.frameDone(sequence: tick.sequence)
/// }
/// ```
public final class FrameRateConnection: Sendable {
    /// The socket path this connection was made to.
    public let socketPath: String

    let core: ConnectionCore

    /// How long a call waits for its answer (`nil`: no limit); then it fails with
    /// ``FrameRateClientError/timedOut(method:after:)``. Re-registrations after a
    /// reconnect wait as long; then that connection is dropped and made again.
    public var requestTimeout: Duration? { core.requestTimeout }

    /// The default ``requestTimeout``: 5 s, as the C and Python clients'.
    public static let defaultRequestTimeout: Duration = .seconds(5)

    init(core: ConnectionCore, socketPath: String) {
        self.core = core
        self.socketPath = socketPath
    }

    /// A connection over an already connected `channel` whose lines go to `router`, without reconnect.
    convenience init(channel: any Channel, router: ClientRouter, socketPath: String, requestTimeout: Duration? = defaultRequestTimeout) {
        self.init(
            core: ConnectionCore(
                session: .init(channel: channel, router: router), policy: nil, connector: nil, requestTimeout: requestTimeout
            ),
            socketPath: socketPath
        )
    }

    deinit {
        core.closeNow()
    }

    /// Connects to the daemon.
    ///
    /// - Parameters:
    ///   - socketPath: the socket; `nil` finds it by ``SocketPath/discover(explicit:environment:isSocket:)``:
    ///     `$FRAMERATED_SOCKET`, else the per-user daemon (`$XDG_RUNTIME_DIR/framerated.sock`)
    ///     when its socket exists, else the system daemon (`/run/framerated/framerated.sock`).
    ///   - eventLoopGroup: where the connection's I/O (and its reconnect timers) run;
    ///     `nil` uses `MultiThreadedEventLoopGroup.singleton`.
    ///   - reconnect: when set, a connection that drops is made again with this
    ///     backoff and its links and watches are registered again (see
    ///     ``FrameRateConnection``); `nil` (the default) closes for good instead,
    ///     which suits one-shot commands that should fail fast.
    ///   - onConnectionChange: with `reconnect`, told when the connection drops and once it
    ///     is back with every link and watch registered again (on an event-loop thread; must not block).
    ///   - requestTimeout: how long a call waits for its answer (`nil`: no limit): a daemon
    ///     stopped with `SIGSTOP` or wedged still accepts connections and would hold every
    ///     call for ever. A call past it fails with ``FrameRateClientError/timedOut(method:after:)``.
    ///
    /// Whoever listens on the socket must be root, the `framerated` service user or
    /// this process's own user (`SO_PEERCRED`, checked on every connect, reconnects
    /// included); anyone else may be impersonating the daemon.
    /// - Throws: ``FrameRateClientError/daemonNotRunning(_:)`` when nothing listens
    ///   there (naming every path looked at), ``FrameRateClientError/permissionDenied(path:)``
    ///   when this user may not connect, ``FrameRateClientError/untrustedDaemon(path:uid:)``
    ///   when another user's process answers, ``FrameRateClientError/connectionFailed(path:reason:)``
    ///   otherwise. The first connect is never retried, with or without `reconnect`.
    public static func connect(
        socketPath: String? = nil,
        eventLoopGroup: (any EventLoopGroup)? = nil,
        reconnect: ReconnectPolicy? = nil,
        onConnectionChange: (@Sendable (ConnectionChange) -> Void)? = nil,
        requestTimeout: Duration? = defaultRequestTimeout
    ) async throws(FrameRateClientError) -> FrameRateConnection {
        let target = SocketPath.discover(explicit: socketPath)
        let path = target.path
        let connector = ConnectionCore.connector(
            path: path, group: eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton, trust: .current()
        )
        let router = ClientRouter(registry: StreamRegistry(), keepsStreamsOnClose: reconnect != nil)
        let channel: any Channel
        do {
            channel = try await connector(router).get()
        } catch {
            throw ConnectFailure.map(error, target: target)
        }
        let core = ConnectionCore(
            session: .init(channel: channel, router: router), policy: reconnect, connector: connector, observer: onConnectionChange,
            requestTimeout: requestTimeout
        )
        return FrameRateConnection(core: core, socketPath: path)
    }

    /// The reconnect policy, or `nil` when the connection closes for good once it drops.
    public var reconnectPolicy: ReconnectPolicy? { core.policy }

    /// Whether the connection has closed for good; every call now fails with
    /// ``FrameRateClientError/connectionClosed``. A reconnecting connection is
    /// not closed while it waits for the daemon.
    public var isClosed: Bool { core.isClosed }

    /// Whether the connection is up right now (`false` while reconnecting and once closed).
    public var isConnected: Bool { core.isConnected }

    /// How many times the connection was made again after dropping.
    public var reconnectCount: Int { core.reconnectCount }

    /// Sends request `method` with `params` (an object or array, or `nil` for none)
    /// and returns the daemon's `result` unchanged.
    ///
    /// Streams started through this raw call (e.g. a Register) are not routed:
    /// their notifications are dropped, and they are not registered again after a
    /// reconnect. Use the typed methods for those.
    /// - Throws: ``FrameRateClientError/rpc(_:)`` with the daemon's error, or why no answer came.
    public func call(_ method: String, params: JSONValue?) async throws(FrameRateClientError) -> JSONValue {
        try await call(method, params: params, route: nil)
    }

    /// Sends request `method` and returns the daemon's `result`.
    public func call(_ method: V1Method, params: JSONValue?) async throws(FrameRateClientError) -> JSONValue {
        try await call(method.rawValue, params: params, route: nil)
    }

    /// Sends `method` as a notification (no id, no answer); returns once it is written.
    public func notify(_ method: String, params: JSONValue?) async throws(FrameRateClientError) {
        try await notify(method, params: params, on: core.currentSession())
    }

    /// Closes the connection for good (no more reconnects), which releases its
    /// links and watches on the daemon. Returns once pending calls have failed and
    /// streams have finished.
    public func close() async {
        if let session = core.markClosed() {
            session.channel.close(promise: nil)
            try? await session.channel.closeFuture.get()
            session.router.shutDown(reason: .connectionClosed)
        }
        core.finishAll()
    }

    /// Sends `method` as a notification on `session`.
    func notify(_ method: String, params: JSONValue?, on session: ConnectionCore.Session) async throws(FrameRateClientError) {
        guard !session.router.isClosed else { throw .connectionClosed }
        var buffer = session.channel.allocator.buffer(capacity: 96)
        JSONRPCOutboundMessage.notification(method: method, params: params).writeLine(into: &buffer)
        do {
            try await session.channel.writeAndFlush(buffer).get()
        } catch {
            throw .connectionClosed
        }
    }

    /// Sends a request whose success starts `route` (installed before the next
    /// line is read) and runs `onSuccess` (on the event loop, also before the next
    /// line), on `session` or else the current session.
    func call(
        _ method: String, params: JSONValue?, route: StreamRoute?, on session: ConnectionCore.Session? = nil,
        onSuccess: (@Sendable (JSONValue) -> Void)? = nil
    ) async throws(FrameRateClientError) -> JSONValue {
        let target: ConnectionCore.Session
        if let session {
            target = session
        } else {
            do throws(FrameRateClientError) {
                target = try core.currentSession()
            } catch {
                route?.finishUnused()
                throw error
            }
        }
        let router = target.router
        let channel = target.channel
        let id = router.makeRequestID()
        let timeout = requestTimeout
        // The deadline's timer, cancelled when the answer comes first.
        let deadline = Mutex<Scheduled<Void>?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (reply: ClientRouter.Reply) in
                let refusal = router.enqueue(id: id, route: route) { result in
                    deadline.withLock { $0?.cancel() }
                    if case .success(let value) = result { onSuccess?(value) }
                    reply.resume(returning: result)
                }
                if let refusal {
                    reply.resume(returning: .failure(refusal))
                    return
                }
                var buffer = channel.allocator.buffer(capacity: 128)
                JSONRPCOutboundMessage.request(id: .number(JSONNumber(id)), method: method, params: params).writeLine(into: &buffer)
                channel.writeAndFlush(buffer).whenFailure { _ in
                    router.fail(id: id, with: .connectionClosed)
                }
                if let timeout {
                    // Fired after an answer it does nothing (the call is no longer pending).
                    let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(WireTime.nanoseconds(of: timeout))) {
                        router.giveUp(id: id, with: .timedOut(method: method, after: timeout))
                    }
                    deadline.withLock { $0 = timer }
                }
            }
        } onCancel: {
            router.cancel(id: id)
        }
        return try result.get()
    }

    /// Sends request `method` (a V1 method) on `session`; see ``call(_:params:route:on:onSuccess:)``.
    func call(
        _ method: V1Method, params: JSONValue?, on session: ConnectionCore.Session, onSuccess: (@Sendable (JSONValue) -> Void)? = nil
    ) async throws(FrameRateClientError) -> JSONValue {
        try await call(method.rawValue, params: params, route: nil, on: session, onSuccess: onSuccess)
    }
}

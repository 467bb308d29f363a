public import FrameRateProtocol
public import NIOCore
import NIOPosix

/// One connection to framerated: newline-delimited JSON-RPC 2.0 over its Unix
/// stream socket. The one client used by `framectl`, the integration tests and
/// the benchmark.
///
/// Calls may be made concurrently from any task; responses are matched to
/// calls by id. Links registered (``register(_:tickBufferLimit:)``) and watches
/// started (``watch(eventBufferLimit:)``) belong to this connection: the daemon
/// releases them when it closes. When the connection closes, for any reason,
/// every pending call fails with ``FrameRateClientError/connectionClosed`` (or
/// the protocol error that closed it) and every tick and event stream finishes.
///
/// The connection closes when ``close()`` is called or when the last reference
/// to it goes away; each ``DisplayLinkHandle`` and ``CompositorWatch`` keeps
/// its connection alive.
///
/// ```swift
/// let connection = try await FrameRateConnection.connect()
/// let link = try await connection.register(range: FrameRateRange(minimum: 80, maximum: 120, preferred: 120))
/// for await tick in link.ticks {
///     let secondsLeft = tick.workingTimeLeft()   // until targetTimestamp, CLOCK_MONOTONIC
///     // … render, then:
///     try await link.frameDone(sequence: tick.sequence)
/// }
/// ```
public final class FrameRateConnection: Sendable {
    /// The socket path this connection was made to.
    public let socketPath: String

    let channel: any Channel
    let router: ClientRouter

    init(channel: any Channel, router: ClientRouter, socketPath: String) {
        self.channel = channel
        self.router = router
        self.socketPath = socketPath
    }

    deinit {
        channel.close(promise: nil)
    }

    /// Connects to the daemon.
    ///
    /// - Parameters:
    ///   - socketPath: the socket; `nil` resolves it by ``SocketPath/resolve(explicit:environment:userID:)``
    ///     (`$FRAMERATED_SOCKET`, then the system or per-user default).
    ///   - eventLoopGroup: where the connection's I/O runs; `nil` uses
    ///     `MultiThreadedEventLoopGroup.singleton`.
    /// - Throws: ``FrameRateClientError/daemonNotRunning(path:)`` when nothing listens
    ///   there, ``FrameRateClientError/permissionDenied(path:)`` when this user may not
    ///   connect, ``FrameRateClientError/connectionFailed(path:reason:)`` otherwise.
    public static func connect(
        socketPath: String? = nil,
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) async throws(FrameRateClientError) -> FrameRateConnection {
        let path = SocketPath.resolve(explicit: socketPath)
        let router = ClientRouter()
        let bootstrap = ClientBootstrap(group: eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(NDJSONLineDecoder()),
                        ClientChannelHandler(router: router)
                    )
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
        } catch {
            throw ConnectFailure.map(error, path: path)
        }
        return FrameRateConnection(channel: channel, router: router, socketPath: path)
    }

    /// Whether the connection has closed; every call now fails with ``FrameRateClientError/connectionClosed``.
    public var isClosed: Bool { router.isClosed }

    /// Sends request `method` with `params` (an object or array, or `nil` for none)
    /// and returns the daemon's `result` unchanged.
    ///
    /// Streams started through this raw call (e.g. a Register) are not routed:
    /// their notifications are dropped. Use the typed methods for those.
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
        guard !router.isClosed else { throw .connectionClosed }
        var buffer = channel.allocator.buffer(capacity: 96)
        JSONRPCOutboundMessage.notification(method: method, params: params).writeLine(into: &buffer)
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            throw .connectionClosed
        }
    }

    /// Closes the connection, which releases its links and watches on the daemon.
    /// Returns once pending calls have failed and streams have finished.
    public func close() async {
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
        router.shutDown(reason: .connectionClosed)
    }

    /// Sends a request whose success starts `route`, installed before the next line is read.
    func call(_ method: String, params: JSONValue?, route: StreamRoute?) async throws(FrameRateClientError) -> JSONValue {
        let id = router.makeRequestID()
        let router = self.router
        let channel = self.channel
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (reply: ClientRouter.Reply) in
                if let refusal = router.enqueue(id: id, reply: reply, route: route) {
                    reply.resume(returning: .failure(refusal))
                    return
                }
                var buffer = channel.allocator.buffer(capacity: 128)
                JSONRPCOutboundMessage.request(id: .number(JSONNumber(id)), method: method, params: params).writeLine(into: &buffer)
                channel.writeAndFlush(buffer).whenFailure { _ in
                    router.fail(id: id, with: .connectionClosed)
                }
            }
        } onCancel: {
            router.cancel(id: id)
        }
        return try result.get()
    }
}

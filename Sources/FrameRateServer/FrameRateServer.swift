#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
public import Logging
public import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// The framerated daemon as a swift-service-lifecycle `Service`: binds (or
/// adopts) the Unix socket, runs the compositor on one event loop, and on
/// graceful shutdown stops accepting, sends `Closed` (`UNAVAILABLE`) for every
/// link, flushes, closes every connection and removes the socket file.
public final class FrameRateServer: Service, Sendable {
    /// Callbacks for the process around the server (systemd notify, watchdog). All
    /// are called on the compositor's event loop and must not block.
    public struct Hooks: Sendable {
        /// The socket accepts connections (systemd: `READY=1`).
        public var ready: @Sendable (_ socketPath: String?) -> Void
        /// The one-line status summary changed (systemd: `STATUS=`).
        public var status: @Sendable (_ line: String) -> Void
        /// A vsync was processed: the loop is alive (systemd watchdog).
        public var vsync: @Sendable () -> Void
        /// Shutdown began (systemd: `STOPPING=1`).
        public var stopping: @Sendable () -> Void

        /// Builds hooks; every default does nothing.
        public init(
            ready: @escaping @Sendable (String?) -> Void = { _ in },
            status: @escaping @Sendable (String) -> Void = { _ in },
            vsync: @escaping @Sendable () -> Void = {},
            stopping: @escaping @Sendable () -> Void = {}
        ) {
            self.ready = ready
            self.status = status
            self.vsync = vsync
            self.stopping = stopping
        }
    }

    private let configuration: ServerConfiguration
    private let logger: Logger
    private let eventLoop: any EventLoop
    private let hooks: Hooks
    /// The running core, once `run` has built it; reached only on `eventLoop`.
    private let core = Mutex<NIOLoopBound<CompositorCore>?>(nil)

    /// Builds a server; `eventLoop` defaults to a loop of NIO's singleton group.
    public init(configuration: ServerConfiguration, logger: Logger, eventLoop: (any EventLoop)? = nil, hooks: Hooks = Hooks()) {
        self.configuration = configuration
        self.logger = logger
        self.eventLoop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()
        self.hooks = hooks
    }

    /// Re-reads what can change without a restart (SIGHUP): the admin group's id.
    public func reload() async {
        guard let bound = core.withLock({ $0 }) else { return }
        try? await eventLoop.submit { bound.value.reload() }.get()
    }

    /// Runs until graceful shutdown; throws when the socket cannot be bound.
    public func run() async throws {
        let eventLoop = self.eventLoop
        let configuration = self.configuration
        let logger = self.logger
        let hooks = self.hooks
        let bound = try await eventLoop.submit {
            let core = CompositorCore(configuration: configuration, eventLoop: eventLoop, logger: logger)
            core.statusObserver = hooks.status
            core.vsyncObserver = hooks.vsync
            return NIOLoopBound(core, eventLoop: eventLoop)
        }.get()
        core.withLock { $0 = bound }

        let lineLength = configuration.limits.lineLength
        let highWater = configuration.limits.outboundHighWater
        let listener: Int32
        let boundPath: String?
        switch configuration.listener {
        case .path(let path):
            try SocketFile.prepare(path)
            listener = try Acceptor.listen(path: path, backlog: 1024)
            try SocketFile.setMode(path, mode: configuration.socketMode)
            boundPath = path
        case .inherited(let descriptor, _):
            listener = descriptor
            boundPath = nil
        }
        let acceptor = try Acceptor(listener: listener, logger: logger)
        let socketPath: String? =
            switch configuration.listener {
            case .path(let path): path
            case .inherited(_, let path): path
            }

        try await eventLoop.submit {
            bound.value.start()
            let displays = configuration.displays.map { "display \($0.id.rawValue) \($0.profile.description)" }
            bound.value.logger.notice(
                "daemon started on \(socketPath ?? "an inherited socket"): \(displays.joined(separator: "; "))",
                metadata: ["event": "daemon-started", "socket": "\(socketPath ?? "inherited")", "pid": "\(getpid())"]
            )
            hooks.ready(socketPath)
        }.get()

        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        let accepting = threads.runIfActive(eventLoop: eventLoop) {
            acceptor.run { descriptor, peer in
                // Accepted by the Acceptor (which keeps the descriptor for the tick fan-out),
                // handed to NIO with the options a ServerBootstrap's children had.
                ClientBootstrap(group: eventLoop)
                    .channelOption(.writeBufferWaterMark, value: .init(low: highWater / 2, high: highWater))
                    .channelOption(.allowRemoteHalfClosure, value: true)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers(
                                ByteToMessageHandler(NDJSONLineDecoder(maximumLineLength: lineLength)),
                                SessionHandler(core: bound.value, peer: peer, descriptor: descriptor)
                            )
                        }
                    }
                    .withConnectedSocket(descriptor)
                    .whenFailure { error in logger.error("cannot serve an accepted connection: \(error)") }
            }
        }

        await withGracefulShutdownHandler {
            try? await accepting.get()
        } onGracefulShutdown: {
            hooks.stopping()
            acceptor.stop()
        }
        try? await threads.shutdownGracefully()
        try await eventLoop.flatSubmit { bound.value.shutdown() }.get()
        if let boundPath { SocketFile.remove(boundPath) }
        core.withLock { $0 = nil }
        logger.notice("daemon stopped", metadata: ["event": "daemon-stopped"])
    }
}

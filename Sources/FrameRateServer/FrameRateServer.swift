#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
public import Logging
import Dispatch
public import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// The framerated daemon as a swift-service-lifecycle `Service`: binds (or adopts) the
/// Unix socket, runs the control plane on one NIO event loop and the tick plane on threads
/// of its own, and on graceful shutdown stops accepting, stops the ticks, sends `Closed`
/// (`UNAVAILABLE`) for every link, closes every connection and removes the socket file.
///
/// Threads: the acceptor (one), the control loop (one NIO event loop: reads, requests,
/// replies, events), the tick plane (``ServerConfiguration/fanOutThreads``: a leader that
/// sleeps until the next due vsync, plus helpers that share the sends).
public final class FrameRateServer: Service, Sendable {
    /// Reads per connection per turn of the control loop.
    static let readsPerTurn: UInt = 1
    /// The largest read, bytes (a request line is rarely above 1 KiB; the line limit is 64 KiB).
    static let readSize = 16 * 1024
    /// Accepted connections handed to the control loop and not yet registered there.
    static let registrationsInFlight = 8

    /// Callbacks for the process around the server (systemd notify, watchdog). `ready`,
    /// `status` and `stopping` are called on the control loop, `watchdog` on the tick
    /// plane's leader thread; none may block.
    public struct Hooks: Sendable {
        /// The socket accepts connections (systemd: `READY=1`).
        public var ready: @Sendable (_ socketPath: String?) -> Void
        /// The one-line status summary changed (systemd: `STATUS=`).
        public var status: @Sendable (_ line: String) -> Void
        /// How often the tick plane must prove it is alive; `nil`: no watchdog.
        public var watchdogInterval: Duration?
        /// The tick plane is alive (systemd: `WATCHDOG=1`), every ``watchdogInterval``.
        public var watchdog: @Sendable () -> Void
        /// Shutdown began (systemd: `STOPPING=1`).
        public var stopping: @Sendable () -> Void
        /// Keeps the connections and the snapshot for the next daemon (systemd's file
        /// descriptor store) instead of closing them; called once, off the control loop,
        /// on graceful shutdown. `nil`: stop as usual (links get `Closed`). If it throws,
        /// the server stops as usual.
        public var handOver: (@Sendable (HandoverDescriptors) throws -> Void)?

        /// Builds hooks; every default does nothing.
        public init(
            ready: @escaping @Sendable (String?) -> Void = { _ in },
            status: @escaping @Sendable (String) -> Void = { _ in },
            watchdogInterval: Duration? = nil,
            watchdog: @escaping @Sendable () -> Void = {},
            stopping: @escaping @Sendable () -> Void = {},
            handOver: (@Sendable (HandoverDescriptors) throws -> Void)? = nil
        ) {
            self.handOver = handOver
            self.ready = ready
            self.status = status
            self.watchdogInterval = watchdogInterval
            self.watchdog = watchdog
            self.stopping = stopping
        }
    }

    private let configuration: ServerConfiguration
    private let logger: Logger
    private let eventLoop: any EventLoop
    private let hooks: Hooks
    /// The running core, once `run` has built it; reached only on `eventLoop`.
    private let core = Mutex<NIOLoopBound<CompositorCore>?>(nil)

    /// Builds a server; `eventLoop` (the control loop) defaults to a loop of NIO's singleton group.
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
        // A virtual clock (`--clock virtual`) replaces CLOCK_MONOTONIC as the daemon's `now`.
        let virtualClock: VirtualClock? =
            if case .virtual(let epoch, _) = configuration.clock { VirtualClock(epoch: epoch) } else { nil }
        let now: @Sendable () -> MonotonicClock.Instant
        if let virtualClock { now = { virtualClock.now } } else { now = { MonotonicClock.now } }
        // Every connection costs two descriptors (NIO's and the writer's), three with a tick
        // socket (TickSocket/Attach): take all the kernel allows, and say so when even that
        // is short of --max-connections.
        let descriptors = SystemCall.raiseDescriptorLimit()
        let needed = UInt64(max(0, configuration.limits.connections)) * 3 + 64
        if descriptors < needed {
            logger.warning(
                "the descriptor limit is \(descriptors) (RLIMIT_NOFILE, raised to its hard limit); \(configuration.limits.connections) connections need about \(needed): connections beyond it are refused with RESOURCE_EXHAUSTED",
                metadata: ["event": "descriptor-limit"]
            )
        }

        let shared = SharedModel(
            CompositorCore.initialState(configuration: configuration, start: now(), watchdogInterval: hooks.watchdogInterval),
            waiter: try EventWaiter(), connections: configuration.limits.connections
        )
        let bound = try await eventLoop.submit {
            let core = CompositorCore(configuration: configuration, shared: shared, eventLoop: eventLoop, logger: logger, now: now)
            core.statusObserver = hooks.status
            return NIOLoopBound(core, eventLoop: eventLoop)
        }.get()
        core.withLock { $0 = bound }
        // A virtual clock steps the tick plane on the control loop (VirtualTimeKeeper): one
        // fan-out thread (no helpers to hand sends to), and reports handled at once, in order.
        let engine = try TickEngine(
            shared: shared, workers: virtualClock == nil ? configuration.fanOutThreads : 1, sendPath: configuration.tickSendPath,
            events: TickEngine.Events(
                rateChanged: { display, change, vsync in
                    if virtualClock != nil, eventLoop.inEventLoop {
                        bound.value.refreshRateChanged(display: display, change: change, at: vsync)
                    } else {
                        eventLoop.execute { bound.value.refreshRateChanged(display: display, change: change, at: vsync) }
                    }
                },
                disconnect: { owner in eventLoop.execute { bound.value.disconnectUnwritable(owner: owner) } },
                watchdog: hooks.watchdog,
                lateWake: { lateness, busy in eventLoop.execute { bound.value.tickPlaneLate(lateness: lateness, busy: busy) } },
                sendPathFellBack: { reason in eventLoop.execute { bound.value.tickSendsFellBack(reason: reason) } },
                heldBack: { display, links in eventLoop.execute { bound.value.linksHeldBack(display: display, links) } },
                resumed: { display, links in eventLoop.execute { bound.value.linksResumed(display: display, links) } }
            )
        )

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
        // The acceptor closes the listener when it stops; a handover stores a copy.
        let listenerCopy = hooks.handOver != nil ? try? SystemCall.duplicate(listener) : nil
        var refusal = ByteBuffer()
        JSONRPCOutboundMessage.response(
            id: nil,
            result: .failure(.status(.resourceExhausted, "framerated has no file descriptor left for another connection; try again later"))
        ).writeLine(into: &refusal)
        let acceptor = try Acceptor(listener: listener, refusal: Array(refusal.readableBytesView), logger: logger)
        let socketPath: String? =
            switch configuration.listener {
            case .path(let path): path
            case .inherited(_, let path): path
            }

        /// Serves a connected socket: accepted now, or handed over by the previous daemon.
        let serve: @Sendable (Int32, PeerCredentials, HandoverSession?) -> EventLoopFuture<Void> = { descriptor, peer, adopting in
            // The writer keeps `descriptor` (see SocketWriter: it must outlive NIO's
            // copy); NIO reads from a duplicate and closes that one itself.
            guard let nioDescriptor = try? SystemCall.duplicate(descriptor) else {
                logger.error("cannot serve a connection: no descriptor for a duplicate")
                SystemCall.close(descriptor)
                adopting?.tickDescriptor.map(SystemCall.close)
                return eventLoop.makeSucceededVoidFuture()
            }
            return ClientBootstrap(group: eventLoop)
                .channelOption(.allowRemoteHalfClosure, value: true)
                // One read of at most 16 KiB per connection per turn of the loop (NIO's
                // default is four of up to 64 KiB): a burst of connections each sending a
                // long line then costs the loop a few microseconds each before it reaches
                // the next ready connection, instead of 256 KiB of copying each.
                .channelOption(.maxMessagesPerRead, value: Self.readsPerTurn)
                .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.readSize))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try bound.value.addConnectionHandlers(
                            to: channel.pipeline.syncOperations, peer: peer, destination: { _ in .socket(descriptor) }, adopting: adopting
                        )
                    }
                }
                .withConnectedSocket(nioDescriptor)
                .map { _ in }
                .recover { error in
                    logger.error("cannot serve a connection: \(error)")
                    SystemCall.close(descriptor)
                    // A tick socket nobody adopted (the session never became active) is ours to close.
                    if let adopting, let tick = adopting.tickDescriptor, bound.value.sessions[adopting.owner] == nil {
                        SystemCall.close(tick)
                    }
                }
        }
        if let adoption = configuration.adoption, let takeOver = Self.sortHandedOver(adoption, configuration: configuration, logger: logger) {
            // Every handed-over session must be in place before the first tick: a tick
            // computed for a connection without its writer yet would be counted, not sent.
            await Self.restore(takeOver, core: bound, logger: logger)
            let served = takeOver.adopted.map { record, descriptor in serve(descriptor, PeerCredentials.ofPeer(of: descriptor), record) }
            try? await EventLoopFuture.andAllComplete(served, on: eventLoop).get()
            try? await eventLoop.submit {}.get()
            let owners = Set(takeOver.adopted.map(\.0.owner))
            if let unserved = try? await eventLoop.submit({ bound.value.releaseUnserved(owners) }).get(), !unserved.isEmpty {
                logger.warning(
                    "released \(unserved.count) handed-over links whose connections could not be served (see the errors above)",
                    metadata: ["event": "handover-unserved", "links": "\(unserved.count)"]
                )
            }
        }
        let flusher = virtualClock.map { _ in WritabilityFlusher(shared: shared) }
        let tickThread = try OSThread.spawn(name: "fanout-0") {
            if let flusher {
                flusher.run()
                return
            }
            engine.run(now: now) { raised in
                logger.info(
                    raised
                        ? "fan-out threads run at nice \(TickEngine.fanOutNice)"
                        : "fan-out threads run at normal priority (nice \(TickEngine.fanOutNice) needs CAP_SYS_NICE or RLIMIT_NICE)",
                    metadata: ["event": "fanout-priority"]
                )
            }
        }
        try await eventLoop.submit {
            if let virtualClock, case .virtual(let epoch, let answerTimeout) = configuration.clock {
                bound.value.virtualTime = VirtualTimeKeeper(
                    epoch: epoch, answerTimeout: answerTimeout, clock: virtualClock, engine: engine, shared: shared, eventLoop: eventLoop,
                    gaveUp: { links in bound.value.logGaveUp(on: links, timeout: answerTimeout) }
                )
            }
            bound.value.start()
            let displays = configuration.displays.map { "display \($0.id.rawValue) \($0.profile.description)" }
            bound.value.logger.notice(
                "daemon started on \(socketPath ?? "an inherited socket"): \(displays.joined(separator: "; ")); \(engine.workerCount) fan-out thread(s)",
                metadata: ["event": "daemon-started", "socket": "\(socketPath ?? "inherited")", "pid": "\(getpid())"]
            )
            let sends = engine.sendPath
            if let reason = sends.fallbackReason {
                bound.value.logger.warning(
                    "tick sends use one send(2) per connection: io_uring is unavailable (\(reason))",
                    metadata: ["event": "tick-send-path", "path": "\(sends.path.rawValue)"]
                )
            } else {
                bound.value.logger.info(
                    "tick sends use \(sends.path == .ioUring ? "one io_uring submission per vsync" : "one send(2) per connection")",
                    metadata: ["event": "tick-send-path", "path": "\(sends.path.rawValue)"]
                )
            }
            hooks.ready(socketPath)
        }.get()

        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        let accepting = threads.runIfActive(eventLoop: eventLoop) {
            // At most `registrationsInFlight` accepted connections wait for the control
            // loop at once: a burst of connects then reaches the loop a few per turn,
            // between other connections' reads, instead of one registration task per
            // connection all run back to back (the rest wait in the listen backlog).
            let inFlight = DispatchSemaphore(value: Self.registrationsInFlight)
            acceptor.run { descriptor, peer in
                inFlight.wait()
                serve(descriptor, peer, nil).whenComplete { _ in inFlight.signal() }
            }
        }

        await withGracefulShutdownHandler {
            try? await accepting.get()
        } onGracefulShutdown: {
            hooks.stopping()
            acceptor.stop()
        }
        try? await threads.shutdownGracefully()
        engine.stop()
        flusher?.stop()
        await tickThread.join()
        var handedOver = false
        if let handOver = hooks.handOver {
            handedOver = await Self.handOver(
                with: handOver, core: bound, listener: listenerCopy, drainTimeout: configuration.handoverDrainTimeout, logger: logger
            )
        } else {
            try await eventLoop.flatSubmit { bound.value.shutdown() }.get()
        }
        if let listenerCopy { SystemCall.close(listenerCopy) }
        // The next daemon listens on the same socket file.
        if let boundPath, !handedOver { SocketFile.remove(boundPath) }
        core.withLock { $0 = nil }
        logger.notice("daemon stopped", metadata: ["event": "daemon-stopped"])
    }
}

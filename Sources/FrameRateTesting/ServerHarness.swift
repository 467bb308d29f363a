#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
package import FrameRateModel
package import FrameRatePosix
package import FrameRateProtocol
package import FrameRateServer
package import Logging
import NIOCore
package import NIOEmbedded
import Synchronization

/// A real control plane (`CompositorCore` on an `EmbeddedEventLoop`) and a real tick plane
/// (`TickEngine`, stepped by hand instead of on its thread), over one stepped clock.
/// Connections are `EmbeddedChannel`s with the daemon's pipeline; their writers send to
/// the channel, so a test reads exactly the lines a client would.
///
/// The server unit tests use it directly (they see the server's internals through
/// `@testable import FrameRateServer`); ``InProcessDaemon`` is its public face for code
/// outside this package (the dispatcher fuzz target).
package final class ServerHarness {
    package let loop = EmbeddedEventLoop()
    package let core: CompositorCore
    package let engine: TickEngine
    package let shared: SharedModel
    /// The daemon's clock: moves only when a test moves it.
    package let clock: SteppedMonotonicClock
    /// Counts the tick plane's watchdog pings.
    package let watchdogPings: WatchdogPings
    /// Every channel opened, kept so none is freed while still open.
    private var channels: [EmbeddedChannel] = []
    /// Fan-out threads in all: the leader, stepped by the test, and helpers on threads of their own.
    package let fanOutThreads: Int
    /// The helpers' threads (none with one fan-out thread).
    private let helperThreads: TickEngine.HelperThreads?
    /// Send-path fall-backs the tick plane reported, possibly on a helper's thread: handed to
    /// the control plane on the test's thread after each step, as the daemon hops to its loop.
    private let fallBacks = FallBackQueue()

    /// - Parameters:
    ///   - start: the displays' first vsync (default: `CLOCK_MONOTONIC` now, so tick
    ///     times are comparable with this process's clock; tests measure from it).
    ///   - tickSendPath: how the tick plane sends (default: io_uring, as the daemon does;
    ///     `.sendCalls` skips setting up a ring, which the embedded connections' sinks never
    ///     use anyway: only writers over real sockets, `connect(_:socketBuffer:)`, do).
    ///   - fanOutThreads: with more than 1, connections are dealt to shards as in the daemon
    ///     and the helpers send theirs on real threads; every step waits until they have
    ///     sent. Their connections must be real sockets (`connect(_:socketBuffer:)`): an
    ///     embedded channel may only be touched from the test's thread.
    ///   - governor: the displays' refresh-rate timing (idle timeout, decrease dwell).
    package init(
        limits: ServerConfiguration.Limits = .init(),
        displays: [DisplayConfiguration] = [DisplayConfiguration(id: DisplayID(rawValue: 0))],
        start: MonotonicClock.Instant = MonotonicClock.now,
        watchdogInterval: Duration? = nil,
        logHandler: (any LogHandler)? = nil,
        tickSendPath: BatchSender.Path = .ioUring,
        fanOutThreads: Int = 1,
        governor: RefreshRateGovernor<MonotonicClock>.Settings = .init()
    ) {
        self.fanOutThreads = max(1, fanOutThreads)
        let configuration = ServerConfiguration(
            listener: .path("/nonexistent/framerated-test.sock"), displays: displays, governor: governor, limits: limits,
            fanOutThreads: self.fanOutThreads, tickSendPath: tickSendPath
        )
        let logger = Logger(label: "framerated-test", factory: { _ in logHandler ?? SwiftLogNoOpLogHandler() })
        let clock = SteppedMonotonicClock(start)
        self.clock = clock
        let pings = WatchdogPings()
        self.watchdogPings = pings
        shared = SharedModel(
            CompositorCore.initialState(configuration: configuration, start: start, watchdogInterval: watchdogInterval),
            waiter: try! EventWaiter(), connections: configuration.limits.connections
        )
        core = CompositorCore(configuration: configuration, shared: shared, eventLoop: loop, logger: logger, now: { clock.now })
        let bound = NIOLoopBound(core, eventLoop: loop)
        let fallBacks = self.fallBacks
        engine = try! TickEngine(
            shared: shared, workers: self.fanOutThreads, sendPath: configuration.tickSendPath,
            events: TickEngine.Events(
                rateChanged: { display, change, vsync in bound.value.refreshRateChanged(display: display, change: change, at: vsync) },
                disconnect: { owner in bound.value.disconnectUnwritable(owner: owner) },
                watchdog: { pings.count.add(1, ordering: .relaxed) },
                lateWake: { lateness, busy in bound.value.tickPlaneLate(lateness: lateness, busy: busy) },
                sendPathFellBack: { reason in fallBacks.append(reason) },
                heldBack: { display, links in bound.value.linksHeldBack(display: display, links) },
                resumed: { display, links in bound.value.linksResumed(display: display, links) }
            )
        )
        helperThreads = self.fanOutThreads > 1 ? engine.startHelperThreads() : nil
        core.adminGroupID = testAdminGroupID
        core.start()
    }

    deinit {
        helperThreads?.stopAndJoin()
        for channel in channels where channel.isActive { channel.pipeline.close(promise: nil) }
        loop.run()
        try? loop.syncShutdownGracefully()
    }

    /// A copy of the model as it is now.
    package var compositor: Compositor<MonotonicClock> { shared.read { $0.compositor } }

    /// Opens a connection from `peer` (channelActive registers the session). Requests go
    /// in through an embedded channel; what the daemon writes goes to the channel's
    /// outbound side, or, with `socketBuffer`, through a real socket pair whose daemon end
    /// has a send buffer of about that many bytes (so a test can stop reading and fill it).
    package func connect(_ peer: PeerCredentials = Peers.root, socketBuffer: Int32? = nil) throws -> TestClient {
        precondition(fanOutThreads == 1 || socketBuffer != nil, "with several fan-out threads, connect over a socket (socketBuffer:)")
        let channel = EmbeddedChannel(loop: loop)
        channels.append(channel)
        var peerEnd: Int32?
        let destination: @Sendable (ChannelHandlerContext) -> SocketWriter.Destination
        if let socketBuffer {
            let (daemonEnd, clientEnd) = try SystemCall.socketPair()
            SystemCall.setSendBufferSize(daemonEnd, bytes: socketBuffer)
            peerEnd = clientEnd
            destination = { _ in .socket(daemonEnd) }
        } else {
            destination = { context in
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                return .sink { bytes in bound.value.writeAndFlush(NIOAny(bytes), promise: nil) }
            }
        }
        try core.addConnectionHandlers(to: channel.pipeline.syncOperations, peer: peer, destination: destination)
        channel.connect(to: try SocketAddress(unixDomainSocketPath: "/nonexistent/framerated-test.sock"), promise: nil)
        loop.run()
        return TestClient(server: self, channel: channel, peerDescriptor: peerEnd)
    }

    /// Lets go of the channels already closed (a harness reused for many short runs, as the
    /// dispatcher fuzz target's is, would otherwise keep every channel it ever opened).
    package func forgetClosedChannels() {
        channels.removeAll { !$0.isActive }
    }

    /// Flushes every writer whose socket became writable (what the tick plane's leader
    /// does when epoll reports it), without waiting.
    package func flushWritable() {
        shared.flushWritable(shared.waiter.wait(until: 1))
        loop.run()
    }

    /// When the tick plane would wake next (`nil`: not until something changes).
    package var nextWake: MonotonicClock.Instant? { shared.read { $0.driver.nextDeadline(compositor: $0.compositor) } }

    /// Moves the clock to the tick plane's next wake-up and runs it (a vsync at which some
    /// link ticks, or a rate change, or a deadline); the loop then runs what it scheduled.
    /// - Returns: the instant it ran at.
    /// - Throws: ``TestFailure`` when the tick plane has nothing to wake for.
    @discardableResult
    package func runNextVsync(file: StaticString = #fileID, line: UInt = #line) throws -> MonotonicClock.Instant {
        guard let next = nextWake else { throw TestFailure("the tick plane has nothing to wake for", file: file, line: line) }
        clock.set(max(clock.now, next))
        engine.step(at: clock.now)
        try finishStep(file: file, line: line)
        return clock.now
    }

    /// Moves the clock to `instant` and runs the tick plane there (whatever is due).
    /// - Parameter previousStepFinished: when the tick plane's previous iteration is to have
    ///   finished sending (`nil`: in time): a deadline before it was reached late because the
    ///   fan-out was busy, not because it woke late.
    package func step(to instant: MonotonicClock.Instant, previousStepFinished: MonotonicClock.Instant? = nil) {
        clock.set(instant)
        engine.step(at: instant, previousStepFinished: previousStepFinished)
        do { try finishStep() } catch { preconditionFailure("\(error)") }
    }

    /// What follows every tick-plane step: the helpers' sends, the send-path fall-backs
    /// handed to the control plane on this thread, then the loop's scheduled work.
    private func finishStep(file: StaticString = #fileID, line: UInt = #line) throws {
        try waitForHelpers(file: file, line: line)
        for reason in fallBacks.take() { core.tickSendsFellBack(reason: reason) }
        loop.run()
    }

    /// Waits until the helper threads have sent everything handed to them (at once with one
    /// fan-out thread). Polls their progress, yielding the CPU in between; no fixed sleep.
    /// - Throws: ``TestFailure`` if they have not within 30 s (a stuck helper).
    package func waitForHelpers(file: StaticString = #fileID, line: UInt = #line) throws {
        guard helperThreads != nil else { return }
        let progress = shared.read { $0.progress }
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !progress.allSent {
            guard ContinuousClock.now < deadline else { throw TestFailure("the fan-out helpers did not send their shards within 30 s", file: file, line: line) }
            sched_yield()
        }
    }
}

/// Reasons the tick plane's send path fell back, queued from any fan-out thread.
private final class FallBackQueue: Sendable {
    private let reasons = Mutex<[String]>([])

    func append(_ reason: String) { reasons.withLock { $0.append(reason) } }

    func take() -> [String] {
        reasons.withLock { reasons in
            defer { reasons.removeAll() }
            return reasons
        }
    }
}

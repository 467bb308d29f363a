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
import NIOEmbedded
import Synchronization
import Testing

@testable import FrameRateServer

/// The admin group's id the tests pretend the daemon resolved (the group need not exist).
let testAdminGroupID: UInt32 = 4242

/// Peers as the kernel would report them.
enum Peers {
    static let root = PeerCredentials(pid: 101, uid: 0, gid: 0, groups: [], command: "rootd")
    /// A uid that is neither root nor the user running the tests (the daemon's user).
    static let user: PeerCredentials = {
        let uid: UInt32 = geteuid() == 54321 ? 54322 : 54321
        return PeerCredentials(pid: 202, uid: uid, gid: uid, groups: [100], command: "app")
    }()
    /// An unprivileged uid whose supplementary groups include the admin group.
    static let admin: PeerCredentials = {
        let uid: UInt32 = geteuid() == 54330 ? 54331 : 54330
        return PeerCredentials(pid: 303, uid: uid, gid: uid, groups: [100, testAdminGroupID], command: "settings")
    }()
}

/// A real control plane (`CompositorCore` on an `EmbeddedEventLoop`) and a real tick plane
/// (`TickEngine`, stepped by hand instead of on its thread), over one stepped clock.
/// Connections are `EmbeddedChannel`s with the daemon's pipeline; their writers send to
/// the channel, so a test reads exactly the lines a client would.
final class ServerHarness {
    let loop = EmbeddedEventLoop()
    let core: CompositorCore
    let engine: TickEngine
    let shared: SharedModel
    /// The daemon's clock: moves only when a test moves it.
    let clock: SteppedMonotonicClock
    /// Counts the tick plane's watchdog pings.
    let watchdogPings: WatchdogPings
    private let lineLength: Int
    private let partialLineTimeout: Duration
    /// Every channel opened, kept so none is freed while still open.
    private var channels: [EmbeddedChannel] = []

    /// - Parameter start: the displays' first vsync (default: `CLOCK_MONOTONIC` now, so tick
    ///   times are comparable with this process's clock; tests measure from it).
    init(
        limits: ServerConfiguration.Limits = .init(),
        displays: [DisplayConfiguration] = [DisplayConfiguration(id: DisplayID(rawValue: 0))],
        start: MonotonicClock.Instant = MonotonicClock.now,
        watchdogInterval: Duration? = nil,
        logHandler: (any LogHandler)? = nil
    ) {
        let configuration = ServerConfiguration(
            listener: .path("/nonexistent/framerated-test.sock"), displays: displays, limits: limits, fanOutThreads: 1
        )
        let logger = Logger(label: "framerated-test", factory: { _ in logHandler ?? SwiftLogNoOpLogHandler() })
        let clock = SteppedMonotonicClock(start)
        self.clock = clock
        let pings = WatchdogPings()
        self.watchdogPings = pings
        shared = SharedModel(
            CompositorCore.initialState(configuration: configuration, start: start, watchdogInterval: watchdogInterval),
            waiter: try! EventWaiter()
        )
        core = CompositorCore(configuration: configuration, shared: shared, eventLoop: loop, logger: logger, now: { clock.now })
        let bound = NIOLoopBound(core, eventLoop: loop)
        engine = try! TickEngine(
            shared: shared, workers: 1,
            events: TickEngine.Events(
                rateChanged: { display, change in bound.value.refreshRateChanged(display: display, change: change) },
                disconnect: { owner in bound.value.disconnectUnwritable(owner: owner) },
                watchdog: { pings.count.add(1, ordering: .relaxed) }
            )
        )
        core.adminGroupID = testAdminGroupID
        lineLength = limits.lineLength
        partialLineTimeout = limits.partialLineTimeout
        core.start()
    }

    deinit {
        for channel in channels where channel.isActive { channel.pipeline.close(promise: nil) }
        loop.run()
        try? loop.syncShutdownGracefully()
    }

    /// A copy of the model as it is now.
    var compositor: Compositor<MonotonicClock> { shared.read { $0.compositor } }

    /// Opens a connection from `peer` (channelActive registers the session). Requests go
    /// in through an embedded channel; what the daemon writes goes to the channel's
    /// outbound side, or, with `socketBuffer`, through a real socket pair whose daemon end
    /// has a send buffer of about that many bytes (so a test can stop reading and fill it).
    func connect(_ peer: PeerCredentials = Peers.root, socketBuffer: Int32? = nil) throws -> TestClient {
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
        try channel.pipeline.syncOperations.addHandlers(
            PartialLineTimeoutHandler(timeout: partialLineTimeout),
            ByteToMessageHandler(NDJSONLineDecoder(maximumLineLength: lineLength)),
            SessionHandler(core: core, peer: peer, destination: destination)
        )
        channel.connect(to: try SocketAddress(unixDomainSocketPath: "/nonexistent/framerated-test.sock"), promise: nil)
        loop.run()
        return TestClient(server: self, channel: channel, peerDescriptor: peerEnd)
    }

    /// Flushes every writer whose socket became writable (what the tick plane's leader
    /// does when epoll reports it), without waiting.
    func flushWritable() {
        let readiness = shared.waiter.wait(until: 1)
        for token in readiness.writable {
            shared.read { $0.writers[OwnerID(rawValue: token)] }?.flush()
        }
        loop.run()
    }

    /// When the tick plane would wake next (`nil`: not until something changes).
    var nextWake: MonotonicClock.Instant? { shared.read { $0.driver.nextDeadline(compositor: $0.compositor) } }

    /// Moves the clock to the tick plane's next wake-up and runs it (a vsync at which some
    /// link ticks, or a rate change, or a deadline); the loop then runs what it scheduled.
    /// - Returns: the instant it ran at.
    @discardableResult
    func runNextVsync() throws -> MonotonicClock.Instant {
        let next = try #require(nextWake, "the tick plane has nothing to wake for")
        clock.set(max(clock.now, next))
        engine.step(at: clock.now)
        loop.run()
        return clock.now
    }

    /// Moves the clock to `instant` and runs the tick plane there (whatever is due).
    func step(to instant: MonotonicClock.Instant) {
        clock.set(instant)
        engine.step(at: instant)
        loop.run()
    }
}

/// Counts watchdog pings.
final class WatchdogPings: Sendable {
    let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
}

/// `CLOCK_MONOTONIC` as the tests set it.
final class SteppedMonotonicClock: Sendable {
    private let instant: Mutex<MonotonicClock.Instant>
    init(_ start: MonotonicClock.Instant) { instant = Mutex(start) }
    var now: MonotonicClock.Instant { instant.withLock { $0 } }
    func set(_ now: MonotonicClock.Instant) { instant.withLock { $0 = now } }
    func advance(by duration: Duration) { instant.withLock { $0 = $0.advanced(by: duration) } }
}

/// One test connection: write lines in, read lines out.
struct TestClient {
    /// Keeps the harness (and so the loop and the core) alive while the client is used.
    let server: ServerHarness
    let channel: EmbeddedChannel
    /// The client's end of a real socket pair, when the daemon writes to a socket.
    var peerDescriptor: Int32? = nil
    var loop: EmbeddedEventLoop { server.loop }

    /// Reads whatever the socket holds now (never blocks).
    private func readSocket(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while let count = chunk.withUnsafeMutableBytes({ SystemCall.read(descriptor, into: $0) }), count > 0 {
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes raw bytes as if the peer had sent them.
    func sendBytes(_ text: String) throws {
        try channel.writeInbound(channel.allocator.buffer(string: text))
        loop.run()
    }

    /// Sends one line (a `\n` is appended).
    func send(_ line: String) throws { try sendBytes(line + "\n") }

    /// Every line written to the peer since the last read, in order, without their `\n`.
    /// Each must end with `\n`: the daemon never writes a partial line.
    func lines() throws -> [String] {
        var lines: [String] = []
        if let peerDescriptor {
            let text = readSocket(peerDescriptor)
            #expect(text.isEmpty || text.hasSuffix("\n"), "the daemon writes whole lines: \(text.suffix(200))")
            return text.split(separator: "\n").map(String.init)
        }
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            let text = String(buffer: buffer)
            if text.isEmpty { continue }  // shutdown flushes an empty buffer to connections without links
            #expect(text.hasSuffix("\n"), "every write ends a line: \(text)")
            lines += text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        return lines
    }

    /// Lines written since the last read, without ticks.
    func nonTickLines() throws -> [String] {
        try lines().filter { !$0.hasPrefix(#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","#) }
    }

    /// Sends `line` and returns the one line answering it (other lines are a test failure).
    func call(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try send(line)
        let replies = try nonTickLines()
        #expect(replies.count == 1, "expected one reply to \(line), got \(replies)", sourceLocation: sourceLocation)
        return replies.first ?? ""
    }

    /// Sends a request `{"jsonrpc":"2.0","id":id,"method":method,"params":params}` and returns the reply.
    func request(_ method: V1Method, _ params: String? = nil, id: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try call(requestLine(method.rawValue, params, id: id), sourceLocation: sourceLocation)
    }

    /// Sends a request and returns its parsed `result`, failing the test on an error reply.
    func result(_ method: V1Method, _ params: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let reply = try request(method, params, sourceLocation: sourceLocation)
        guard case .single(.response(_, .success(let result))) = try JSONRPCClientInbound.parse(line: reply) else {
            Issue.record("expected a result, got \(reply)", sourceLocation: sourceLocation)
            return .null
        }
        return result
    }

    /// Sends a request and returns its parsed error, failing the test on a result.
    func error(_ method: String, _ params: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> RPCError {
        let reply = try call(requestLine(method, params, id: 1), sourceLocation: sourceLocation)
        guard case .single(.response(_, .failure(let error))) = try JSONRPCClientInbound.parse(line: reply) else {
            Issue.record("expected an error, got \(reply)", sourceLocation: sourceLocation)
            return RPCError(code: 0, message: "")
        }
        return error
    }

    func error(_ method: V1Method, _ params: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> RPCError {
        try error(method.rawValue, params, sourceLocation: sourceLocation)
    }

    /// Registers a link and returns its id.
    func register(_ minimum: Double, _ maximum: Double, _ preferred: Double = 0, extra: String = "") throws -> UInt64 {
        let params = #"{"range":{"minimum":\#(minimum),"maximum":\#(maximum),"preferred":\#(preferred)}\#(extra)}"#
        let result = try result(.register, params)
        let link = try #require(result["link"]?.int64Value)
        return UInt64(link)
    }

    /// Closes the connection as a peer hang-up would.
    func close() {
        channel.pipeline.close(promise: nil)
        loop.run()
    }
}

func requestLine(_ method: String, _ params: String?, id: Int) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)""# + (params.map { #","params":\#($0)"# } ?? "") + "}"
}

func notificationLine(_ method: V1Method, _ params: String? = nil) -> String {
    #"{"jsonrpc":"2.0","method":"\#(method.rawValue)""# + (params.map { #","params":\#($0)"# } ?? "") + "}"
}

/// Parses one line the daemon sent.
func message(_ line: String) throws -> JSONRPCClientMessage {
    guard case .single(let message) = try JSONRPCClientInbound.parse(line: line) else {
        throw TestFailure("not a single message: \(line)")
    }
    return message
}

/// The params of a notification line, checking its method.
func notificationParams(_ line: String, _ method: V1Method, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    guard case .notification(let name, let params) = try message(line), name == method.rawValue, let params else {
        throw TestFailure("expected a \(method.rawValue) notification, got \(line)")
    }
    return params
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

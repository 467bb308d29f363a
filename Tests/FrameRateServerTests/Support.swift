#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import Logging
import NIOCore
import NIOEmbedded
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

/// A real `CompositorCore` on an `EmbeddedEventLoop`; connections are `EmbeddedChannel`s
/// with the daemon's pipeline.
final class ServerHarness {
    let loop = EmbeddedEventLoop()
    let core: CompositorCore
    private let lineLength: Int
    /// Every channel opened, kept so none is freed while still open.
    private var channels: [EmbeddedChannel] = []

    init(
        limits: ServerConfiguration.Limits = .init(),
        displays: [DisplayConfiguration] = [DisplayConfiguration(id: DisplayID(rawValue: 0))],
        startTimers: Bool = false,
        logHandler: (any LogHandler)? = nil
    ) {
        let configuration = ServerConfiguration(listener: .path("/nonexistent/framerated-test.sock"), displays: displays, limits: limits)
        let logger = Logger(label: "framerated-test", factory: { _ in logHandler ?? SwiftLogNoOpLogHandler() })
        core = CompositorCore(configuration: configuration, eventLoop: loop, logger: logger)
        core.adminGroupID = testAdminGroupID
        lineLength = limits.lineLength
        if startTimers { core.start() }
    }

    deinit {
        // Close what is still open, then drop the timers still scheduled (vsync, unwritable).
        for channel in channels where channel.isActive { channel.pipeline.close(promise: nil) }
        loop.run()
        for timer in core.vsyncTimers.values { timer.cancel() }
        try? loop.syncShutdownGracefully()
    }

    /// Opens a connection from `peer` (channelActive registers the session).
    func connect(_ peer: PeerCredentials = Peers.root) throws -> TestClient {
        let channel = EmbeddedChannel(loop: loop)
        channels.append(channel)
        try channel.pipeline.syncOperations.addHandlers(
            ByteToMessageHandler(NDJSONLineDecoder(maximumLineLength: lineLength)),
            SessionHandler(core: core, peer: peer)
        )
        channel.connect(to: try SocketAddress(unixDomainSocketPath: "/nonexistent/framerated-test.sock"), promise: nil)
        loop.run()
        return TestClient(server: self, channel: channel)
    }

    /// Moves the embedded loop's clock to `display`'s next vsync, firing its timer once.
    func runNextVsync(of display: DisplayID = DisplayID(rawValue: 0)) throws {
        let next = try core.compositor.nextVsync(of: display)
        loop.advanceTime(to: .uptimeNanoseconds(UInt64(next.nanoseconds)))
    }
}

/// One test connection: write lines in, read lines out.
struct TestClient {
    /// Keeps the harness (and so the loop and the core) alive while the client is used.
    let server: ServerHarness
    let channel: EmbeddedChannel
    var loop: EmbeddedEventLoop { server.loop }

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

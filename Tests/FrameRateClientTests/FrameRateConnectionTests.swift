import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateClient

/// A `FrameRateConnection` over a `NIOAsyncTestingChannel` (the thread-safe
/// embedded channel, since calls run in other tasks): the test plays the daemon.
struct ConnectionHarness {
    let channel: NIOAsyncTestingChannel
    let connection: FrameRateConnection

    init() async throws {
        let router = ClientRouter()
        let channel = try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(NDJSONLineDecoder()), ClientChannelHandler(router: router))
        }
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/framerated-client-test.sock")).get()
        self.channel = channel
        self.connection = FrameRateConnection(channel: channel, router: router, socketPath: "/tmp/framerated-client-test.sock")
    }

    /// The next message the client writes, as JSON (waits for it).
    func nextWritten() async throws -> JSONValue {
        let buffer = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
        let text = String(buffer: buffer)
        #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1, "one message per line: \(text)")
        return try JSONValue(parsing: text)
    }

    /// Waits for the next request, checks its method, and returns its id and params.
    func nextRequest(_ method: V1Method) async throws -> (id: Int64, params: JSONValue?) {
        let request = try await nextWritten()
        #expect(request["method"]?.stringValue == method.rawValue)
        return (try #require(request["id"]?.int64Value), request["params"])
    }

    /// Sends `lines` from the daemon.
    func deliver(_ lines: String...) async throws {
        try await channel.writeInbound(ByteBuffer(string: lines.map { $0 + "\n" }.joined()))
    }
}

@Suite("FrameRateConnection against a scripted daemon")
struct FrameRateConnectionTests {
    @Test("a call the daemon never answers fails after the request timeout; a Register answered late is released")
    func requestTimeout() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        #expect(connection.requestTimeout == .seconds(5))
        let checking = Task { try await connection.health() }
        _ = try await harness.nextRequest(.healthCheck)
        await harness.channel.testingEventLoop.advanceTime(by: .milliseconds(4_999))
        await harness.channel.testingEventLoop.advanceTime(by: .milliseconds(1))
        await #expect(throws: FrameRateClientError.timedOut(method: V1Method.healthCheck.rawValue, after: .seconds(5))) {
            try await checking.value
        }
        #expect(FrameRateClientError.timedOut(method: "m", after: .milliseconds(250)).description.hasPrefix("framerated did not answer m within 0.25 s"))

        let range = try FrameRateRange(minimum: 30, maximum: 60, preferred: 60)
        let registering = Task { try await connection.register(range: range) }
        let register = try await harness.nextRequest(.register)
        await harness.channel.testingEventLoop.advanceTime(by: .seconds(5))
        await #expect(throws: FrameRateClientError.timedOut(method: V1Method.register.rawValue, after: .seconds(5))) {
            try await registering.value
        }
        // The daemon registered the link after all: the client releases it at once.
        try await harness.deliver(Wire.registered(id: register.id, link: 9))
        #expect(try await harness.nextWritten() == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Invalidate", "params": ["link": 9]])

        // Answered in time, a call is not failed by its timer afterwards.
        let answered = Task { try await connection.health() }
        let check = try await harness.nextRequest(.healthCheck)
        try await harness.deliver(Wire.result(id: check.id, #"{"status":"SERVING"}"#))
        #expect(try await answered.value == "SERVING")
        await harness.channel.testingEventLoop.advanceTime(by: .seconds(10))
    }

    @Test("register, ticks, update, frameDone and invalidate")
    func linkLifecycle() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        let registering = Task { try await connection.register(range: range, label: "scroll", highFrameRate: true) }
        let register = try await harness.nextRequest(.register)
        #expect(register.params == RegisterRequest(range: range, label: "scroll", highFrameRate: true).jsonValue)
        try await harness.deliver(Wire.registered(id: register.id, link: 5), Wire.tick(link: 5, sequence: 0))
        let link = try await registering.value
        #expect(link.id == LinkID(rawValue: 5))
        #expect(link.refreshRate == 120 && link.callbackRate == 120)
        var ticks = link.ticks.makeAsyncIterator()
        #expect(await ticks.next()?.sequence == 0)

        try await link.frameDone(sequence: 0)
        #expect(try await harness.nextWritten() == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone", "params": ["link": 5, "sequence": 0]])

        let pausing = Task { try await link.pause() }
        let update = try await harness.nextRequest(.update)
        #expect(update.params == ["link": 5, "paused": true])
        try await harness.deliver(Wire.result(id: update.id, #"{"link":5,"refreshRate":60.0,"callbackRate":60.0}"#))
        #expect(try await pausing.value.refreshRate == 60)
        #expect(link.isPaused)
        #expect(link.registration == RegisterRequest(range: range, paused: true, label: "scroll", highFrameRate: true))

        let invalidating = Task { try await link.invalidate() }
        let invalidate = try await harness.nextRequest(.invalidate)
        #expect(invalidate.params == ["link": 5])
        try await harness.deliver(Wire.result(id: invalidate.id, "{}"))
        try await invalidating.value
        #expect(await ticks.next() == nil)
        #expect(link.end == .invalidated)
        await connection.close()
    }

    @Test("watch: the initial state, then typed events, until unwatch")
    func watchLifecycle() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let watching = Task { try await connection.watch() }
        let request = try await harness.nextRequest(.watch)
        let state = #"{"displays":[{"id":0,"profile":"fixed-60","supportedRates":[60.0],"refreshRate":60.0,"reason":"idle","caps":{},"links":[]}]}"#
        let removed = CompositorEvent.linkRemoved(display: DisplayID(rawValue: 0), link: LinkID(rawValue: 2), reason: "invalidated")
        try await harness.deliver(Wire.result(id: request.id, #"{"watch":3,"state":\#(state)}"#), Wire.event(removed, watch: 3))
        let watch = try await watching.value
        #expect(watch.id == 3)
        #expect(watch.initialState.displays.map(\.refreshRate) == [60])
        var events = watch.events.makeAsyncIterator()
        #expect(await events.next()?.event == removed)

        let unwatching = Task { try await watch.unwatch() }
        let unwatch = try await harness.nextRequest(.unwatch)
        #expect(unwatch.params == ["watch": 3])
        try await harness.deliver(Wire.result(id: unwatch.id, "{}"))
        try await unwatching.value
        #expect(await events.next() == nil)
        await connection.close()
    }

    @Test("the daemon's error reaches the caller as .rpc, with its status")
    func rpcError() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let setting = Task { () async throws(FrameRateClientError) -> SetCapsResult in try await connection.setCaps(SetCapsRequest(lowPowerMode: true)) }
        let request = try await harness.nextRequest(.setCaps)
        #expect(request.params == ["lowPowerMode": true])
        let denied = RPCError.status(.permissionDenied, "only root and members of the 'framerated-admin' group may change caps")
        try await harness.deliver(Wire.error(id: request.id, denied))
        let result = await setting.result
        #expect(throws: FrameRateClientError.rpc(denied)) { try result.get() }
        #expect(connection.isClosed == false)
        await connection.close()
        #expect(connection.isClosed)
    }

    @Test("a result that does not parse is a protocol violation naming the method")
    func unreadableResult() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let reading = Task { () async throws(FrameRateClientError) -> CompositorState in try await connection.state() }
        let request = try await harness.nextRequest(.getState)
        try await harness.deliver(Wire.result(id: request.id, #"{"displays":3}"#))
        let result = await reading.result
        #expect(throws: FrameRateClientError.protocolViolation("an unreadable GetState result: result.displays must be an array, got number")) {
            try result.get()
        }
        await connection.close()
    }

    @Test("a cancelled Register returns at once; the link its late answer creates is invalidated")
    func cancelledRegister() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 30, maximum: 60)
        let registering = Task { () async throws(FrameRateClientError) -> DisplayLinkHandle in try await connection.register(range: range) }
        let request = try await harness.nextRequest(.register)
        registering.cancel()
        let result = await registering.result
        #expect(throws: FrameRateClientError.cancelled) { try result.get() }
        try await harness.deliver(Wire.registered(id: request.id, link: 11))
        #expect(try await harness.nextWritten() == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Invalidate", "params": ["link": 11]])
        #expect(!connection.isClosed)
        await connection.close()
    }

    @Test("closing the connection fails a call still waiting")
    func closeFailsPending() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let checking = Task { () async throws(FrameRateClientError) -> String in try await connection.health() }
        _ = try await harness.nextRequest(.healthCheck)
        await connection.close()
        let result = await checking.result
        #expect(throws: FrameRateClientError.connectionClosed) { try result.get() }
        await #expect(throws: FrameRateClientError.connectionClosed) { try await connection.health() }
        await #expect(throws: FrameRateClientError.connectionClosed) { try await connection.frameDone(link: LinkID(rawValue: 1), sequence: 0) }
    }
}

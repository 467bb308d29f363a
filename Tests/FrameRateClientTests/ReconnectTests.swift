import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import FrameRateClient

/// A reconnecting `FrameRateConnection` over `NIOAsyncTestingChannel`s on one
/// `NIOAsyncTestingEventLoop`: the test plays the daemon, and its restarts, and
/// moves the loop's clock to fire the reconnect timers (no real time passes).
final class ReconnectHarness: Sendable {
    static let address = try! SocketAddress(unixDomainSocketPath: "/tmp/framerated-client-test.sock")

    let loop = NIOAsyncTestingEventLoop()
    let connection: FrameRateConnection
    /// What the connector shares with the test.
    private final class Shared: Sendable {
        /// Every channel the client opened, the first one included.
        let opened = Mutex<[NIOAsyncTestingChannel]>([])
        /// How many connect attempts were made after the first connection, and how many of them should fail.
        let attempts = Mutex((made: 0, toFail: 0))
        /// What the connection's observer heard, in order.
        let changes = Mutex<[ConnectionChange]>([])
    }

    private let shared = Shared()

    init(policy: ReconnectPolicy = ReconnectPolicy(jitter: 0)) async throws {
        let registry = StreamRegistry()
        let router = ClientRouter(registry: registry, keepsStreamsOnClose: true)
        let first = try await NIOAsyncTestingChannel(loop: loop) { channel in
            try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(NDJSONLineDecoder()), ClientChannelHandler(router: router))
        }
        try await first.connect(to: Self.address).get()
        shared.opened.withLock { $0.append(first) }
        let loop = self.loop
        let shared = self.shared
        let connector: ConnectionCore.Connector = { router in
            let fail = shared.attempts.withLock { attempts in
                attempts.made += 1
                guard attempts.toFail > 0 else { return false }
                attempts.toFail -= 1
                return true
            }
            if fail { return loop.makeFailedFuture(IOError(errnoCode: 2, reason: "connect")) }
            let channel = NIOAsyncTestingChannel(loop: loop)
            do {
                try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(NDJSONLineDecoder()), ClientChannelHandler(router: router))
            } catch {
                return loop.makeFailedFuture(error)
            }
            shared.opened.withLock { $0.append(channel) }
            let registered: EventLoopFuture<Void> = (channel as any Channel).register()
            return registered.flatMap { channel.connect(to: Self.address) }.map { channel as any Channel }
        }
        let core = ConnectionCore(
            session: .init(channel: first, router: router), policy: policy, connector: connector,
            observer: { change in shared.changes.withLock { $0.append(change) } }
        )
        self.connection = FrameRateConnection(core: core, socketPath: "/tmp/framerated-client-test.sock")
    }

    /// The latest channel the client opened.
    var channel: NIOAsyncTestingChannel { shared.opened.withLock { $0.last! } }

    /// What the connection's observer heard so far, in order.
    var changes: [ConnectionChange] { shared.changes.withLock { $0 } }

    /// Connect attempts made so far (after the first connection).
    var attemptsMade: Int { shared.attempts.withLock { $0.made } }

    /// Makes the next `count` connect attempts fail (nothing listening).
    func failNextAttempts(_ count: Int) { shared.attempts.withLock { $0.toFail = count } }

    /// Moves the loop's clock by `step` until `attemptsMade` reaches `count`; returns the time moved.
    @discardableResult
    func advance(untilAttempts count: Int, step: TimeAmount = .milliseconds(1)) async -> TimeAmount {
        var moved = TimeAmount.zero
        while attemptsMade < count {
            await loop.advanceTime(by: step)
            moved = moved + step
            precondition(moved < .seconds(60), "no connect attempt within 60 s of loop time")
        }
        return moved
    }

    /// The next message the client writes on the latest channel, as JSON.
    func nextWritten() async throws -> JSONValue {
        let buffer = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
        return try JSONValue(parsing: String(buffer: buffer))
    }

    /// Waits for the next request, checks its method, and returns its id and params.
    func nextRequest(_ method: V1Method) async throws -> (id: Int64, params: JSONValue?) {
        let request = try await nextWritten()
        #expect(request["method"]?.stringValue == method.rawValue)
        return (try #require(request["id"]?.int64Value), request["params"])
    }

    /// Sends `lines` from the daemon on the latest channel.
    func deliver(_ lines: String...) async throws {
        try await channel.writeInbound(ByteBuffer(string: lines.map { $0 + "\n" }.joined()))
    }

    /// A tick for daemon link `link` at `timestamp`.
    static func tick(link: UInt64, sequence: UInt64, timestamp: Double, skipped: UInt64 = 0) -> String {
        let tick = TickNotification(
            link: LinkID(rawValue: link), sequence: sequence, timestamp: timestamp, targetTimestamp: timestamp + 1.0 / 120,
            duration: 1.0 / 120, refreshRate: 120, callbackRate: 120, skipped: skipped
        )
        return JSONRPCOutboundMessage.notification(method: V1Method.tick.rawValue, params: tick.jsonValue).jsonValue.jsonString
    }

    /// Registers `request`, answering with daemon link `link`.
    func register(_ request: RegisterRequest, as link: UInt64) async throws -> DisplayLinkHandle {
        let connection = self.connection
        let registering = Task { try await connection.register(request, tickBufferLimit: 256) }
        let register = try await nextRequest(.register)
        #expect(register.params == request.jsonValue)
        try await deliver(Wire.registered(id: register.id, link: link))
        return try await registering.value
    }
}

@Suite("FrameRateConnection reconnect against a scripted daemon")
struct ReconnectUnitTests {
    @Test("a restart: backoff, links registered again as they stood, the same handles and streams, one gap, ids and FrameDone mapped")
    func restart() async throws {
        let harness = try await ReconnectHarness()
        let connection = harness.connection
        let fast = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        let video = try FrameRateRange(minimum: 30, maximum: 60, preferred: 30)

        // A runs; B is updated then paused; C is on display 1; E is invalidated during the outage.
        let a = try await harness.register(RegisterRequest(range: fast, label: "scroll", highFrameRate: true), as: 5)
        let b = try await harness.register(RegisterRequest(range: fast), as: 6)
        let c = try await harness.register(RegisterRequest(range: video, display: DisplayID(rawValue: 1), label: "video"), as: 7)
        let e = try await harness.register(RegisterRequest(range: video), as: 8)
        #expect([a.id, b.id, c.id, e.id].map(\.rawValue) == [5, 6, 7, 8])
        try await harness.deliver(
            ReconnectHarness.tick(link: 5, sequence: 1, timestamp: 100), ReconnectHarness.tick(link: 6, sequence: 1, timestamp: 100),
            ReconnectHarness.tick(link: 5, sequence: 2, timestamp: 100 + 1.0 / 120), ReconnectHarness.tick(link: 6, sequence: 2, timestamp: 100 + 1.0 / 120)
        )
        let updating = Task { try await b.update(range: video, paused: true) }
        let update = try await harness.nextRequest(.update)
        #expect(update.params == ["link": 6, "range": ["minimum": 30.0, "maximum": 60.0, "preferred": 30.0], "paused": true])
        try await harness.deliver(Wire.result(id: update.id, #"{"link":6,"refreshRate":120.0,"callbackRate":60.0}"#))
        _ = try await updating.value

        // The daemon stops: Closed UNAVAILABLE for every link, then the socket closes.
        for link in UInt64(5)...8 {
            try await harness.deliver(Wire.closed(link: link, status: .unavailable, message: "framerated is shutting down"))
        }
        try await harness.channel.close()
        #expect(!connection.isConnected && !connection.isClosed)
        #expect([a, b, c, e].allSatisfy { $0.end == nil })
        #expect(a.daemonID == nil)
        // During the outage: FrameDone is dropped, Update fails fast, Invalidate succeeds locally.
        try await a.frameDone(sequence: 2)
        await #expect(throws: FrameRateClientError.connectionClosed) { try await a.update(paused: true) }
        await #expect(throws: FrameRateClientError.connectionClosed) { try await connection.state() }
        try await e.invalidate()
        #expect(e.end == .invalidated)

        // The first attempt finds nothing listening; the second, 10 + 20 ms in, connects.
        harness.failNextAttempts(1)
        let waited = await harness.advance(untilAttempts: 2)
        #expect(waited >= .milliseconds(30) && waited <= .milliseconds(31), "\(waited)")
        #expect(connection.reconnectCount == 1)

        // A, B and C are registered again as they stand now, in id order; E is not.
        let reA = try await harness.nextRequest(.register)
        let reB = try await harness.nextRequest(.register)
        let reC = try await harness.nextRequest(.register)
        #expect(reA.params == RegisterRequest(range: fast, label: "scroll", highFrameRate: true).jsonValue)
        #expect(reB.params == RegisterRequest(range: video, paused: true).jsonValue)
        #expect(reC.params == RegisterRequest(range: video, display: DisplayID(rawValue: 1), label: "video").jsonValue)
        let notFound = RPCError.status(.notFound, "display 1 does not exist; displays: 0")
        try await harness.deliver(
            Wire.registered(id: reA.id, link: 1), Wire.registered(id: reB.id, link: 2), Wire.error(id: reC.id, notFound),
            // The first tick 0.5 s (60 intervals) after A's last one: 59 skipped.
            ReconnectHarness.tick(link: 1, sequence: 1, timestamp: 100 + 1.0 / 120 + 0.5),
            ReconnectHarness.tick(link: 1, sequence: 2, timestamp: 100 + 2.0 / 120 + 0.5)
        )
        #expect(connection.isConnected)
        #expect(a.id.rawValue == 5 && a.daemonID?.rawValue == 1)
        #expect(b.daemonID?.rawValue == 2)
        var aTicks = a.ticks.makeAsyncIterator()
        var seen: [TickNotification] = []
        for _ in 0..<4 { seen.append(try #require(await aTicks.next())) }
        #expect(seen.map(\.link.rawValue) == [5, 5, 5, 5])
        #expect(seen.map(\.sequence) == [1, 2, 62, 63])
        #expect(seen.map(\.skipped) == [0, 0, 59, 0])

        // C could not come back: it ends with the daemon's answer.
        for await _ in c.ticks {}
        #expect(c.end == .reregistrationFailed(.rpc(notFound)))
        #expect(c.end?.status == .notFound)

        // FrameDone maps back to the new daemon's sequence; one from before the restart goes out as 0.
        try await a.frameDone(sequence: 63)
        #expect(try await harness.nextWritten() == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone", "params": ["link": 1, "sequence": 2]])
        try await a.frameDone(sequence: 2)
        #expect(try await harness.nextWritten() == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone", "params": ["link": 1, "sequence": 0]])

        // B was paused: resuming it gives sequence + 1 with nothing skipped.
        let resuming = Task { try await b.resume() }
        let resume = try await harness.nextRequest(.update)
        #expect(resume.params == ["link": 2, "paused": false])
        try await harness.deliver(Wire.result(id: resume.id, #"{"link":2,"refreshRate":120.0,"callbackRate":60.0}"#))
        #expect(try await resuming.value.link.rawValue == 6)
        try await harness.deliver(ReconnectHarness.tick(link: 2, sequence: 1, timestamp: 200))
        var bTicks = b.ticks.makeAsyncIterator()
        var bSeen: [TickNotification] = []
        for _ in 0..<3 { bSeen.append(try #require(await bTicks.next())) }
        #expect(bSeen.map(\.sequence) == [1, 2, 3])
        #expect(bSeen.map(\.skipped) == [0, 0, 0])
        #expect(bSeen.map(\.link.rawValue) == [6, 6, 6])

        // A new link whose daemon id is a live link's application id gets a fresh id.
        let d = try await harness.register(RegisterRequest(range: video), as: 5)
        #expect(d.id.rawValue == 7 && d.daemonID?.rawValue == 5)
        try await harness.deliver(ReconnectHarness.tick(link: 5, sequence: 1, timestamp: 201))
        var dTicks = d.ticks.makeAsyncIterator()
        #expect(await dTicks.next()?.link.rawValue == 7)
        let invalidating = Task { try await connection.invalidate(link: d.id) }
        let invalidate = try await harness.nextRequest(.invalidate)
        #expect(invalidate.params == ["link": 5])
        try await harness.deliver(Wire.result(id: invalidate.id, "{}"))
        try await invalidating.value
        #expect(d.end == .invalidated)

        await connection.close()
        #expect(connection.isClosed)
        for await _ in a.ticks {}
        #expect(a.end == .connectionClosed)
        #expect(b.end == .connectionClosed)
    }

    @Test("a watch is started again: one resynchronized event with the new state, then events under the same id")
    func watchComesBack() async throws {
        let harness = try await ReconnectHarness()
        let connection = harness.connection
        let watching = Task { try await connection.watch() }
        let request = try await harness.nextRequest(.watch)
        let state = #"{"displays":[{"id":0,"profile":"fixed-60","supportedRates":[60.0],"refreshRate":60.0,"reason":"idle","caps":{},"links":[]}]}"#
        try await harness.deliver(Wire.result(id: request.id, #"{"watch":3,"state":\#(state)}"#))
        let watch = try await watching.value
        #expect(watch.id == 3)

        try await harness.channel.close()
        await harness.advance(untilAttempts: 1)
        let again = try await harness.nextRequest(.watch)
        let removed = CompositorEvent.linkRemoved(display: DisplayID(rawValue: 0), link: LinkID(rawValue: 2), reason: "invalidated")
        try await harness.deliver(Wire.result(id: again.id, #"{"watch":1,"state":\#(state)}"#), Wire.event(removed, watch: 1))
        var events = watch.events.makeAsyncIterator()
        let resynchronized = try #require(await events.next())
        #expect(resynchronized.kind == CompositorWatchEvent.resynchronizedKind)
        #expect(resynchronized.watch == 3)
        #expect(resynchronized.event == nil)
        #expect(resynchronized.resynchronizedState?.displays.map(\.refreshRate) == [60])
        let event = try #require(await events.next())
        #expect(event.watch == 3 && event.event == removed)

        let unwatching = Task { try await watch.unwatch() }
        let unwatch = try await harness.nextRequest(.unwatch)
        #expect(unwatch.params == ["watch": 1])
        try await harness.deliver(Wire.result(id: unwatch.id, "{}"))
        try await unwatching.value
        #expect(await events.next() == nil)
        await connection.close()
    }

    @Test("an UNAVAILABLE answer to a re-registration (the daemon is stopping again) is retried on the next connection")
    func unavailableIsRetried() async throws {
        let harness = try await ReconnectHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 30, maximum: 60)
        let link = try await harness.register(RegisterRequest(range: range, label: "x"), as: 4)
        try await harness.channel.close()
        await harness.advance(untilAttempts: 1)
        let first = try await harness.nextRequest(.register)
        try await harness.deliver(Wire.error(id: first.id, .status(.unavailable, "framerated is shutting down")))
        // The client closes that connection itself (a daemon handing its connections over
        // would keep it open), and waits longer before the next attempt: 20 ms, not 10.
        #expect(link.end == nil && !connection.isConnected)
        #expect(await harness.advance(untilAttempts: 2) == .milliseconds(20))
        let second = try await harness.nextRequest(.register)
        #expect(second.params == RegisterRequest(range: range, label: "x").jsonValue)
        try await harness.deliver(Wire.registered(id: second.id, link: 1))
        #expect(link.end == nil && link.daemonID?.rawValue == 1)
        #expect(connection.reconnectCount == 2)
        await connection.close()
    }

    @Test("a re-registration left unanswered for requestTimeout fails the attempt: the session closes and the next one registers every link again")
    func unansweredReregistrationRetries() async throws {
        let harness = try await ReconnectHarness()
        let connection = harness.connection
        #expect(connection.requestTimeout == .seconds(5))
        let range = try FrameRateRange(minimum: 30, maximum: 60)
        let answered = try await harness.register(RegisterRequest(range: range, label: "answered"), as: 4)
        let silent = try await harness.register(RegisterRequest(range: range, label: "silent"), as: 5)
        try await harness.channel.close()
        await harness.advance(untilAttempts: 1)
        let first = try await harness.nextRequest(.register)
        _ = try await harness.nextRequest(.register)
        try await harness.deliver(Wire.registered(id: first.id, link: 1))

        // One nanosecond short of the deadline the session is still up.
        await harness.loop.advanceTime(by: .seconds(5) - .nanoseconds(1))
        #expect(connection.isConnected && connection.reconnectCount == 1)
        await harness.loop.advanceTime(by: .nanoseconds(1))
        try #require(!connection.isConnected)
        #expect(silent.end == nil && answered.end == nil)

        // A failed attempt, though the daemon answered on it: the next wait is 20 ms, not 10,
        // so that maximumAttempts still ends an outage of a daemon that never answers all.
        #expect(await harness.advance(untilAttempts: 2) == .milliseconds(20))
        #expect(harness.changes == [.lost], "the failed attempt is part of the outage, not a return")
        let again = [try await harness.nextRequest(.register), try await harness.nextRequest(.register)]
        #expect(again.map(\.params) == [RegisterRequest(range: range, label: "answered").jsonValue, RegisterRequest(range: range, label: "silent").jsonValue])
        try await harness.deliver(Wire.registered(id: again[0].id, link: 1), Wire.registered(id: again[1].id, link: 2))
        #expect(answered.end == nil && answered.daemonID?.rawValue == 1)
        #expect(silent.end == nil && silent.daemonID?.rawValue == 2)
        #expect(connection.reconnectCount == 2)
        let changes = harness.changes
        #expect(changes.count == 2 && changes.first == .lost)
        // (The outage is wall time, ContinuousClock, which this loop's stepped clock does not move.)
        if case .restored(_, let links, let watches) = changes.last {
            #expect(links == [answered.id, silent.id] && watches == 0)
        } else {
            Issue.record("no restored change: \(changes)")
        }
        // Every answer came in time: the deadline of the second session closes nothing.
        await harness.loop.advanceTime(by: .seconds(6))
        #expect(connection.isConnected && connection.reconnectCount == 2)
        await connection.close()
    }

    @Test("a refusal met by an attempt that then fails is forgotten: the next attempt registers that link again")
    func refusalInAFailedAttemptIsForgotten() async throws {
        let harness = try await ReconnectHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 30, maximum: 60)
        let refused = try await harness.register(RegisterRequest(range: range, label: "refused"), as: 4)
        let silent = try await harness.register(RegisterRequest(range: range, label: "silent"), as: 5)
        try await harness.channel.close()
        await harness.advance(untilAttempts: 1)
        let first = try await harness.nextRequest(.register)
        _ = try await harness.nextRequest(.register)
        // The daemon that came back first has no display 0 yet, and never answers the second.
        try await harness.deliver(Wire.error(id: first.id, RPCError.status(.notFound, "display 0 does not exist")))
        #expect(refused.end == nil, "the attempt is not over: the refusal waits for it")
        await harness.loop.advanceTime(by: .seconds(5))
        try #require(!connection.isConnected)
        // (A require: an ended link would not be registered again, and waiting for its
        // request below would hang the test instead of failing it.)
        try #require(refused.end == nil && silent.end == nil, "\(String(describing: refused.end))")

        #expect(await harness.advance(untilAttempts: 2) == .milliseconds(20))
        let again = [try await harness.nextRequest(.register), try await harness.nextRequest(.register)]
        #expect(again.map(\.params) == [RegisterRequest(range: range, label: "refused").jsonValue, RegisterRequest(range: range, label: "silent").jsonValue])
        try await harness.deliver(Wire.registered(id: again[0].id, link: 1), Wire.registered(id: again[1].id, link: 2))
        #expect(refused.end == nil && refused.daemonID?.rawValue == 1)
        #expect(silent.end == nil && silent.daemonID?.rawValue == 2)
        await connection.close()
    }

    @Test("a refusal met by an attempt that succeeds ends that link once every answer is in")
    func refusalInASucceededAttemptEndsTheLink() async throws {
        let harness = try await ReconnectHarness()
        let range = try FrameRateRange(minimum: 30, maximum: 60)
        let refused = try await harness.register(RegisterRequest(range: range, label: "refused"), as: 4)
        let kept = try await harness.register(RegisterRequest(range: range, label: "kept"), as: 5)
        try await harness.channel.close()
        await harness.advance(untilAttempts: 1)
        let first = try await harness.nextRequest(.register)
        let second = try await harness.nextRequest(.register)
        let notFound = RPCError.status(.notFound, "display 0 does not exist")
        try await harness.deliver(Wire.error(id: first.id, notFound))
        #expect(refused.end == nil)
        try await harness.deliver(Wire.registered(id: second.id, link: 1))
        #expect(refused.end == .reregistrationFailed(.rpc(notFound)))
        #expect(kept.end == nil && kept.daemonID?.rawValue == 1)
        await harness.connection.close()
    }

    @Test("a daemon that accepts and closes at once (its connection limit) does not restart the backoff: the waits grow, then the connection gives up")
    func acceptedAndClosedCountsAsFailed() async throws {
        let harness = try await ReconnectHarness(policy: ReconnectPolicy(jitter: 0, maximumAttempts: 3))
        let connection = harness.connection
        let link = try await harness.register(RegisterRequest(range: try FrameRateRange(minimum: 30, maximum: 60)), as: 1)
        try await harness.channel.close()
        var waits: [TimeAmount] = []
        for attempt in 1...3 {
            waits.append(await harness.advance(untilAttempts: attempt))
            // Accepted, then refused as at the connection limit: an error with a null id,
            // after which the client closes (the re-registration it sent is never answered).
            _ = try await harness.nextRequest(.register)
            try await harness.deliver(#"{"jsonrpc":"2.0","id":null,"error":{"code":8,"message":"framerated is at its connection limit"}}"#)
            try? await harness.channel.close()
        }
        // 10, 20 and 40 ms: attempts 0, 1 and 2, not attempt 0 three times.
        #expect(waits == [.milliseconds(10), .milliseconds(20), .milliseconds(40)])
        for await _ in link.ticks {}
        #expect(link.end == .connectionClosed)
        #expect(connection.isClosed)
        await harness.loop.advanceTime(by: .seconds(10))
        #expect(harness.attemptsMade == 3)
    }

    @Test("maximumAttempts: the connection gives up, closing for good and ending its links")
    func givesUp() async throws {
        let harness = try await ReconnectHarness(policy: ReconnectPolicy(jitter: 0, maximumAttempts: 2))
        let connection = harness.connection
        let link = try await harness.register(RegisterRequest(range: try FrameRateRange(minimum: 30, maximum: 60)), as: 1)
        harness.failNextAttempts(5)
        try await harness.channel.close()
        await harness.advance(untilAttempts: 2)
        for await _ in link.ticks {}
        #expect(link.end == .connectionClosed)
        #expect(connection.isClosed)
        // No third attempt is scheduled.
        await harness.loop.advanceTime(by: .seconds(10))
        #expect(harness.attemptsMade == 2)
    }
}

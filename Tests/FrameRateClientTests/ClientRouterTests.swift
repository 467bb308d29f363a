import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateClient

@Suite("ClientRouter and ClientChannelHandler on an EmbeddedChannel")
struct ClientRouterTests {
    @Test("request ids count up from 1")
    func requestIDs() {
        let router = ClientRouter()
        #expect((0..<3).map { _ in router.makeRequestID() } == [1, 2, 3])
    }

    @Test("responses are matched to calls by id, in any order, also inside a batch")
    func responsesByID() async throws {
        let router = ClientRouter()
        let calls = [
            await router.startCall(id: 1), await router.startCall(id: 2), await router.startCall(id: 3),
            await router.startCall(id: 4),
        ]
        let notFound = RPCError.status(.notFound, "no link 9")
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.result(id: 3, #"{"n":3}"#))
            try channel.deliver(Wire.error(id: 1, notFound))
            try channel.deliver("[\(Wire.result(id: 4, "null")),\(Wire.result(id: 2, #"{"n":2}"#))]")
            #expect(channel.isActive)
        }
        #expect(await calls[0].value == .failure(.rpc(notFound)))
        #expect(await calls[1].value == .success(["n": 2]))
        #expect(await calls[2].value == .success(["n": 3]))
        #expect(await calls[3].value == .success(.null))
    }

    @Test("ticks go to their link's stream, the route is in place for a tick on the same read, unknown links are dropped")
    func ticksRouted() async throws {
        let router = ClientRouter()
        let first = TestLink()
        let second = TestLink()
        let registerFirst = await router.startCall(id: 1, route: first.route)
        let registerSecond = await router.startCall(id: 2, route: second.route)
        try withClientChannel(router) { channel in
            // Each Register answer is followed at once by the link's first tick, in one read.
            try channel.deliver(Wire.registered(id: 1, link: 7), Wire.tick(link: 7, sequence: 0))
            try channel.deliver(Wire.registered(id: 2, link: 8), Wire.tick(link: 8, sequence: 0))
            try channel.deliver(Wire.tick(link: 8, sequence: 1), Wire.tick(link: 7, sequence: 1), Wire.tick(link: 99, sequence: 5))
            try channel.deliver(Wire.tick(link: 8, sequence: 4, skipped: 2))
            #expect(router.record(for: LinkID(rawValue: 7)) != nil)
            #expect(router.record(for: LinkID(rawValue: 99)) == nil)
            #expect(channel.isActive)
        }
        #expect(try (await registerFirst.value).get()["link"] == 7)
        #expect(try (await registerSecond.value).get()["link"] == 8)
        let firstTicks = await first.collect()
        let secondTicks = await second.collect()
        #expect(firstTicks.map(\.link.rawValue) == [7, 7])
        #expect(firstTicks.map(\.sequence) == [0, 1])
        #expect(secondTicks.map(\.link.rawValue) == [8, 8, 8])
        #expect(secondTicks.map(\.sequence) == [0, 1, 4])
        #expect(secondTicks.last?.skipped == 2)
    }

    @Test("Closed ends exactly its link, with the daemon's status and message")
    func closedEndsLink() async throws {
        let router = ClientRouter()
        let closing = TestLink()
        let staying = TestLink()
        let calls = [await router.startCall(id: 1, route: closing.route), await router.startCall(id: 2, route: staying.route)]
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.registered(id: 1, link: 3), Wire.registered(id: 2, link: 4))
            try channel.deliver(Wire.tick(link: 3, sequence: 0))
            try channel.deliver(Wire.closed(link: 3, status: .unavailable, message: "framerated is shutting down"))
            try channel.deliver(Wire.tick(link: 3, sequence: 1))
            #expect(router.record(for: LinkID(rawValue: 3)) == nil)
            #expect(router.record(for: LinkID(rawValue: 4)) != nil)
            #expect(staying.record.snapshot.end == nil)
            #expect(channel.isActive)
        }
        for call in calls { _ = await call.value }
        #expect(await closing.collect().map(\.sequence) == [0])
        let end = try #require(closing.record.snapshot.end)
        #expect(end == .closedByDaemon(LinkClosedNotification(link: LinkID(rawValue: 3), status: .unavailable, message: "framerated is shutting down")))
        #expect(end.status == .unavailable)
        #expect(end.description == "closed by the daemon (UNAVAILABLE): framerated is shutting down")
        // The other link ended only when the connection did.
        _ = await staying.collect()
        #expect(staying.record.snapshot.end == .connectionClosed)
    }

    @Test("Events go to their watch, typed when this client knows the kind")
    func eventsRouted() async throws {
        let router = ClientRouter()
        let first = TestWatch()
        let second = TestWatch()
        let calls = [await router.startCall(id: 1, route: first.route), await router.startCall(id: 2, route: second.route)]
        let rateChange = CompositorEvent.refreshRateChanged(display: DisplayID(rawValue: 0), from: 60, to: 120, reason: "a link asks")
        let capsChange = CompositorEvent.capsChanged(display: DisplayID(rawValue: 0), caps: DisplayCaps(lowPowerMode: true))
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.result(id: 1, #"{"watch":1,"state":{"displays":[]}}"#), Wire.result(id: 2, #"{"watch":2,"state":{"displays":[]}}"#))
            try channel.deliver(Wire.event(rateChange, watch: 2), Wire.event(capsChange, watch: 1))
            try channel.deliver(#"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"watch":1,"kind":"displayAdded","display":1}}"#)
            try channel.deliver(Wire.event(rateChange, watch: 77))
            #expect(channel.isActive)
        }
        for call in calls { _ = await call.value }
        let firstEvents = await first.collect()
        let secondEvents = await second.collect()
        #expect(secondEvents.map(\.event) == [rateChange])
        #expect(secondEvents.first?.watch == 2)
        #expect(firstEvents.map(\.kind) == ["capsChanged", "displayAdded"])
        #expect(firstEvents.first?.event == capsChange)
        // A kind from a newer daemon: no typed event, but everything in params.
        #expect(firstEvents.last?.event == nil)
        #expect(firstEvents.last?.display == DisplayID(rawValue: 1))
        #expect(firstEvents.last?.params["kind"] == "displayAdded")
    }

    @Test("a notification method this client does not know is ignored")
    func unknownNotification() async throws {
        let router = ClientRouter()
        let call = await router.startCall(id: 1)
        try withClientChannel(router) { channel in
            try channel.deliver(#"{"jsonrpc":"2.0","method":"framerate.v2.Something/New","params":{"x":1}}"#)
            try channel.deliver(Wire.result(id: 1, "true"))
            #expect(channel.isActive)
        }
        #expect(await call.value == .success(true))
    }

    @Test(
        "a line that is not protocol v1 closes the connection and fails every pending call with the violation",
        arguments: [
            ("this is not json", "unreadable line: invalid JSON"),
            (#"{"jsonrpc":"2.0","id":99,"result":{}}"#, "a response to id 99, which is not awaiting an answer"),
            (#"{"jsonrpc":"2.0","id":"abc","result":{}}"#, #"a response to id "abc", which this client never sent"#),
            (#"{"jsonrpc":"2.0","id":null,"result":{}}"#, "a successful response with id null"),
            (#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":7}}"#, "a malformed Tick: missing required field sequence"),
            (#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Closed","params":{"status":"OK"}}"#, "a malformed Closed: missing required field link"),
            (#"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"kind":"linkAdded"}}"#, "an Event without a valid watch id"),
            (#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#, "unreadable line: requests from the server are not supported"),
        ] as [(String, String)]
    )
    func protocolViolation(line: String, detail: String) async throws {
        let router = ClientRouter()
        let link = TestLink()
        let register = await router.startCall(id: 1, route: link.route)
        let pending = await router.startCall(id: 2)
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.registered(id: 1, link: 7))
            try channel.deliver(line)
            #expect(!channel.isActive, "the connection is closed")
        }
        #expect(try (await register.value).get()["link"] == 7)
        let result = await pending.value
        guard case .failure(.protocolViolation(let message)) = result else {
            Issue.record("expected a protocol violation, got \(result)")
            return
        }
        #expect(message.hasPrefix(detail), "\(message)")
        let error = FrameRateClientError.protocolViolation(message)
        #expect(error.description.contains("check that the client and framerated are the same version"))
        #expect(error.status == .internalError)
        // Streams finish, and the session refuses later calls.
        _ = await link.collect()
        #expect(link.record.snapshot.end == .connectionClosed)
        #expect(router.isClosed)
        #expect(await router.startCall(id: 3).value == .failure(.connectionClosed))
    }

    @Test("an error the daemon could not tie to a request (id null) fails every pending call with it")
    func errorWithNullID() async throws {
        let router = ClientRouter()
        let calls = [await router.startCall(id: 1), await router.startCall(id: 2)]
        let error = RPCError.lineTooLong(limit: 65536)
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.error(id: nil, error))
            #expect(!channel.isActive)
        }
        for call in calls { #expect(await call.value == .failure(.rpc(error))) }
    }

    @Test("a line longer than the limit is a protocol violation")
    func oversizedLine() async throws {
        let router = ClientRouter()
        let call = await router.startCall(id: 1)
        try withClientChannel(router, maximumLineLength: 64) { channel in
            try channel.deliver(Wire.result(id: 1, "\"" + String(repeating: "x", count: 100) + "\""))
            #expect(!channel.isActive)
        }
        #expect(await call.value == .failure(.protocolViolation("a line longer than 64 bytes")))
    }

    @Test("the connection closing fails pending calls, ends links and watches, and refuses later calls")
    func connectionClosed() async throws {
        let router = ClientRouter()
        let link = TestLink()
        let watch = TestWatch()
        let register = await router.startCall(id: 1, route: link.route)
        let startWatch = await router.startCall(id: 2, route: watch.route)
        let pending = [await router.startCall(id: 3), await router.startCall(id: 4, route: TestLink().route)]
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.registered(id: 1, link: 7), Wire.result(id: 2, #"{"watch":1}"#))
            try channel.deliver(Wire.tick(link: 7, sequence: 0))
            try channel.close().wait()
        }
        _ = await register.value
        _ = await startWatch.value
        for call in pending { #expect(await call.value == .failure(.connectionClosed)) }
        #expect(await link.collect().map(\.sequence) == [0])
        #expect(link.record.snapshot.end == .connectionClosed)
        #expect(link.record.snapshot.end?.status == .unavailable)
        #expect(await watch.collect().isEmpty)
        #expect(router.isClosed)
        #expect(await router.startCall(id: 5).value == .failure(.connectionClosed))
        // Only the first shut-down counts.
        router.shutDown(reason: .protocolViolation("late"))
        #expect(link.record.snapshot.end == .connectionClosed)
    }

    @Test("tick buffering is bounded: a reader that falls behind keeps the newest ticks")
    func bufferingNewest() async throws {
        let router = ClientRouter()
        let link = TestLink(bufferLimit: 3)
        let register = await router.startCall(id: 1, route: link.route)
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.registered(id: 1, link: 7))
            for sequence in 0..<10 as Range<UInt64> { try channel.deliver(Wire.tick(link: 7, sequence: sequence)) }
            try channel.close().wait()
        }
        _ = await register.value
        #expect(await link.collect().map(\.sequence) == [7, 8, 9])
    }

    @Test("a cancelled Register fails at once; when its answer comes the link is invalidated again")
    func cancelledRegister() async throws {
        let router = ClientRouter()
        let link = TestLink()
        let register = await router.startCall(id: 1, route: link.route)
        router.cancel(id: 1)
        #expect(await register.value == .failure(.cancelled))
        let watch = TestWatch()
        let startWatch = await router.startCall(id: 2, route: watch.route)
        router.cancel(id: 2)
        let failed = await router.startCall(id: 3, route: TestLink().route)
        router.cancel(id: 3)
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.registered(id: 1, link: 9), Wire.result(id: 2, #"{"watch":4}"#))
            try channel.deliver(Wire.error(id: 3, .status(.resourceExhausted, "too many links")))
            #expect(channel.isActive, "answers to abandoned calls are expected, not violations")
            #expect(
                try channel.written() == [
                    ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Invalidate", "params": ["link": 9]],
                    ["jsonrpc": "2.0", "method": "framerate.v1.Compositor/Unwatch", "params": ["watch": 4]],
                ]
            )
            #expect(router.record(for: LinkID(rawValue: 9)) == nil)
            // Each abandoned id is answered once: a second answer is a violation.
            try channel.deliver(Wire.result(id: 1, "{}"))
            #expect(!channel.isActive)
        }
        #expect(await startWatch.value == .failure(.cancelled))
        #expect(await failed.value == .failure(.cancelled))
        #expect(await link.collect().isEmpty)
        #expect(await watch.collect().isEmpty)
    }

    @Test("a call cancelled before it was enqueued is never sent")
    func cancelledEarly() async {
        let router = ClientRouter()
        router.cancel(id: 1)
        let link = TestLink()
        #expect(await router.startCall(id: 1, route: link.route).value == .failure(.cancelled))
        #expect(await link.collect().isEmpty)
        #expect(link.record.snapshot.end == .connectionClosed)
    }

    @Test("a Register answer without a link id starts no stream")
    func registerWithoutLink() async throws {
        let router = ClientRouter()
        let link = TestLink()
        let register = await router.startCall(id: 1, route: link.route)
        try withClientChannel(router) { channel in
            try channel.deliver(Wire.result(id: 1, #"{"refreshRate":120}"#))
            #expect(channel.isActive)
        }
        #expect(await register.value == .success(["refreshRate": 120]))
        #expect(await link.collect().isEmpty)
    }
}

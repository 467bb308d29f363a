import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// JSON-RPC 2.0 behaviour through the real pipeline (decoder + session handler).
@Suite struct SessionJSONRPCTests {
    static let health = V1Method.healthCheck.rawValue

    @Test func batchWithNotificationsAnswersRequestsInOrder() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let batch = """
            [{"jsonrpc":"2.0","id":1,"method":"\(Self.health)"},\
            {"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/FrameDone","params":{"link":9,"sequence":1}},\
            {"jsonrpc":"2.0","method":"\(V1Method.register.rawValue)","params":{"range":{"minimum":30,"maximum":60}}},\
            {"jsonrpc":"2.0","id":"two","method":"nope"},\
            {"jsonrpc":"2.0","id":3,"method":"\(V1Method.invalidate.rawValue)","params":{"link":1}}]
            """
        #expect(
            try client.call(batch)
                == #"[{"jsonrpc":"2.0","id":1,"result":{"status":"SERVING"}},{"jsonrpc":"2.0","id":"two","error":{"code":-32601,"message":"Method not found","data":{"status":"UNIMPLEMENTED","method":"nope"}}},{"jsonrpc":"2.0","id":3,"result":{}}]"#
        )
        // The Register notification ran (its link got id 1), then the Invalidate in the same batch removed it.
        #expect(server.compositor.linkCount == 0)
    }

    @Test func batchRunsInOrder() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let register = requestLine(V1Method.register.rawValue, #"{"range":{"minimum":30,"maximum":60,"preferred":60}}"#, id: 1)
        let reply = try client.call("[\(register),\(register)]")
        guard case .batch(let responses) = try JSONRPCClientInbound.parse(line: reply) else {
            Issue.record("not a batch: \(reply)")
            return
        }
        #expect(responses.compactMap { $0.result?["link"]?.int64Value } == [1, 2])
    }

    @Test func emptyBatchIsAnInvalidRequest() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call("[]")
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"a batch must not be empty"}}}"#
        )
    }

    @Test func batchOfNotificationsGetsNoReply() throws {
        let server = ServerHarness()
        let client = try server.connect()
        try client.send(
            "[" + notificationLine(.healthCheck) + ","
                + notificationLine(.register, #"{"range":{"minimum":30,"maximum":60}}"#) + "]"
        )
        #expect(try client.lines().isEmpty)
        // A Register sent as a notification still registers a link (whose id the client never learns).
        #expect(server.compositor.linkCount == 1)
    }

    @Test func invalidElementsOfABatchAreAnsweredOneByOne() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(#"[1,{"jsonrpc":"2.0","id":5}]"#)
                == #"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"a request must be an object, not number"}}},{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"method is missing"}}}]"#
        )
    }

    @Test(arguments: [
        #""abc""#, #""é \"quoted\" \\ \u0000""#, "12345678901234567890123", "1.50", "-0", "1e3", "0", "null",
    ])
    func idIsEchoedExactly(_ id: String) throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(Self.health)"}"#)
                == #"{"jsonrpc":"2.0","id":\#(id),"result":{"status":"SERVING"}}"#
        )
    }

    @Test func idIsEchoedOnErrors() throws {
        let client = try ServerHarness().connect()
        let reply = try client.call(#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"nope"}"#)
        #expect(reply.hasPrefix(#"{"jsonrpc":"2.0","id":18446744073709551616,"error":{"code":-32601,"#))
    }

    @Test func parseErrorHasIDNull() throws {
        let client = try ServerHarness().connect()
        let reply = try client.call(#"{"jsonrpc":"2.0","id":1,"method":"#)
        #expect(reply.hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"status":"INVALID_ARGUMENT","detail":""#))
        // The connection stays usable.
        #expect(try client.call(requestLine(Self.health, nil, id: 2)) == #"{"jsonrpc":"2.0","id":2,"result":{"status":"SERVING"}}"#)
    }

    @Test func invalidRequests() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(#"{"jsonrpc":"1.0","id":27,"method":"\#(Self.health)"}"#)
                == #"{"jsonrpc":"2.0","id":27,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"jsonrpc must be exactly \"2.0\""}}}"#
        )
        #expect(
            try client.call(#"{"jsonrpc":"2.0","id":[1],"method":"\#(Self.health)"}"#)
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"id must be a string, a number or null, not array"}}}"#
        )
        #expect(
            try client.call(#"{"jsonrpc":"2.0","id":30,"method":"\#(Self.health)","params":"x"}"#)
                == #"{"jsonrpc":"2.0","id":30,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"params must be an array or an object, not string"}}}"#
        )
        #expect(try client.call("42").hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"#))
        // Without an id but malformed: still answered (it is not a valid notification).
        #expect(try client.call(#"{"jsonrpc":"2.0","method":7}"#).hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"#))
    }

    @Test func notificationsAreNeverAnswered() throws {
        let client = try ServerHarness().connect()
        try client.send(#"{"jsonrpc":"2.0","method":"nope"}"#)
        try client.send(notificationLine(.register, "{}"))
        try client.send(notificationLine(.tick, "{}"))
        #expect(try client.lines().isEmpty)
    }

    @Test func oversizedLineIsRejectedAndTheConnectionClosed() throws {
        let server = ServerHarness()
        let client = try server.connect()
        _ = try client.register(30, 60, 60)
        let limit = ServerConfiguration.Limits().lineLength
        #expect(limit == 65536)
        let before = requestLine(Self.health, nil, id: 1)
        let filler = String(repeating: "x", count: limit + 1 - #"{"a":""}"#.utf8.count)
        let oversized = #"{"a":"\#(filler)"}"#
        #expect(oversized.utf8.count == limit + 1)
        let after = requestLine(V1Method.register.rawValue, #"{"range":{"minimum":30,"maximum":60}}"#, id: 3)
        try client.sendBytes(before + "\n" + oversized + "\n" + after + "\n")
        #expect(
            try client.lines()
                == [
                    #"{"jsonrpc":"2.0","id":1,"result":{"status":"SERVING"}}"#,
                    #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"line longer than 65536 bytes; the connection is closed"}}}"#,
                ]
        )
        #expect(!client.channel.isActive)
        // The line after the oversized one was not run, and closing released the link.
        #expect(server.compositor.linkCount == 0)
        #expect(server.core.sessions.isEmpty)
    }

    @Test func aLineOfExactlyTheLimitIsAccepted() throws {
        let client = try ServerHarness(limits: .init(lineLength: 1024)).connect()
        let prefix = #"{"jsonrpc":"2.0","id":1,"method":"\#(Self.health)","params":{"service":""#
        let line = prefix + String(repeating: "x", count: 1024 - prefix.utf8.count - 3) + #""}}"#
        #expect(line.utf8.count == 1024)
        // Read and answered (the service name is too long, but that is the method's business).
        #expect(try client.call(line).hasPrefix(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"#))
        try client.sendBytes(line + "x\n")
        #expect(try client.lines().first?.contains(#""code":-32600"#) == true)
        #expect(!client.channel.isActive)
    }

    @Test func crlfBlankLinesAndSplitWrites() throws {
        let client = try ServerHarness().connect()
        try client.sendBytes("\n  \r\n\t\n" + requestLine(Self.health, nil, id: 1) + "\r\n")
        #expect(try client.lines() == [#"{"jsonrpc":"2.0","id":1,"result":{"status":"SERVING"}}"#])
        // A line arriving in pieces is answered once it is complete; two lines in one write get two replies.
        let line = requestLine(Self.health, nil, id: 2)
        try client.sendBytes(String(line.prefix(10)))
        #expect(try client.lines().isEmpty)
        try client.sendBytes(String(line.dropFirst(10)) + "\n" + requestLine(Self.health, nil, id: 3) + "\n")
        #expect(try client.lines().count == 2)
    }
}

/// Links belong to their connection; the daemon's graceful stop.
@Suite struct SessionLifetimeTests {
    @Test func closingAConnectionReleasesItsLinks() throws {
        let server = ServerHarness()
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        let first = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        let second = try client.register(30, 60, 60)
        _ = try watcher.lines()
        let observer = try server.connect(Peers.user)
        #expect(try observer.result(.getState)["displays"]?[0]?["links"]?.arrayValue?.count == 2)

        client.close()
        #expect(server.compositor.linkCount == 0)
        #expect(try observer.result(.getState)["displays"]?[0]?["links"] == [])
        let removed = try watcher.lines().map { try notificationParams($0, .event) }
        #expect(
            removed == [
                ["watch": 1, "kind": "linkRemoved", "display": 0, "link": JSONValue(first), "reason": "connection closed"],
                ["watch": 1, "kind": "linkRemoved", "display": 0, "link": JSONValue(second), "reason": "connection closed"],
            ]
        )
    }

    @Test func closingAWatchingConnectionEndsItsWatches() throws {
        let server = ServerHarness()
        let watcher = try server.connect()
        _ = try watcher.result(.watch)
        watcher.close()
        #expect(server.core.watchers.isEmpty)
        _ = try server.connect().register(30, 60, 60)  // no write to a closed channel
        #expect(server.core.sessions.count == 1)
    }

    @Test func shutdownSendsClosedForEveryLinkThenClosesEveryConnection() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let first = try client.register(30, 60, 60)
        let second = try client.register(10, 60)
        let idle = try server.connect(Peers.user)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        _ = try watcher.lines()

        var stopped = false
        server.engine.stop()
        server.core.shutdown().assumeIsolated().whenComplete { _ in stopped = true }
        server.loop.run()

        #expect(stopped)
        #expect(
            try client.nonTickLines() == [first, second].map {
                #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Closed","params":{"link":\#($0),"status":"UNAVAILABLE","message":"framerated is shutting down"}}"#
            }
        )
        let closed = try LinkClosedNotification(json: notificationParams(
            #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Closed","params":{"link":1,"status":"UNAVAILABLE","message":"framerated is shutting down"}}"#,
            .closed
        ))
        #expect(closed.status == .unavailable)
        #expect(try idle.lines().isEmpty)
        for connection in [client, idle, watcher] { #expect(!connection.channel.isActive) }
        #expect(server.core.sessions.isEmpty)
        #expect(server.shared.read { $0.driver.isStopped })
        #expect(server.nextWake == nil)

        // No more ticks: a wake-up a second later writes nothing.
        server.step(to: server.clock.now.advanced(by: .seconds(1)))
        #expect(try client.lines().isEmpty)

        // A connection arriving while stopping is refused.
        let late = try server.connect()
        #expect(
            try late.lines()
                == [#"{"jsonrpc":"2.0","id":null,"error":{"code":14,"message":"framerated is shutting down","data":{"status":"UNAVAILABLE"}}}"#]
        )
        #expect(!late.channel.isActive)
    }
}

/// A client that shuts down its sending side after its requests (`printf … | nc -U`).
@Suite struct HalfCloseTests {
    @Test func requestsBeforeHalfCloseAreAnsweredThenAConnectionWithoutLinksCloses() throws {
        let server = ServerHarness()
        let client = try server.connect()
        try client.send(requestLine(V1Method.healthCheck.rawValue, nil, id: 7))
        client.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        client.loop.run()
        #expect(try client.lines() == [#"{"jsonrpc":"2.0","id":7,"result":{"status":"SERVING"}}"#])
        #expect(!client.channel.isActive, "nothing more to receive: closed once the reply is flushed")
    }

    @Test func aHalfClosedConnectionHoldingLinksKeepsReceivingTicks() throws {
        let server = ServerHarness()
        let client = try server.connect()
        _ = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        client.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        client.loop.run()
        #expect(client.channel.isActive)
        try server.runNextVsync()
        #expect(try client.lines().contains { $0.contains(V1Method.tick.rawValue) })
    }
}

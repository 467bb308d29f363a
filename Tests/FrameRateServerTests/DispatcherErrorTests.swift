import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// One request with bad params and the field its -32602 error must name.
struct InvalidParamsCase: Sendable, CustomTestStringConvertible {
    let method: V1Method
    let params: String
    let field: String?
    var testDescription: String { "\(method.method) \(params)" }
}

/// Every error the dispatcher and the JSON-RPC layer answer.
@Suite struct DispatcherErrorTests {
    @Test func unknownMethod() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(requestLine("framerate.v1.DisplayLink/Frobnicate", nil, id: 1))
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"status":"UNIMPLEMENTED","method":"framerate.v1.DisplayLink/Frobnicate"}}}"#
        )
        // Method names are exact: no case folding, no leading slash.
        #expect(try client.error("framerate.v1.displaylink/register", "{}").code == -32601)
        #expect(try client.error("/framerate.v1.DisplayLink/Register", "{}").code == -32601)
    }

    @Test func reservedRPCMethods() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(requestLine("rpc.ping", nil, id: 2))
                == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":{"status":"UNIMPLEMENTED","method":"rpc.ping"}}}"#
        )
        // rpc.discover answers (OpenRPCTests), but a notification to it is dropped like any rpc. one.
        try client.send(#"{"jsonrpc":"2.0","method":"rpc.discover"}"#)
        #expect(try client.lines().isEmpty)
    }

    @Test(arguments: [V1Method.tick, .closed, .event])
    func daemonNotificationsCannotBeCalled(_ method: V1Method) throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.call(requestLine(method.rawValue, "{}", id: 3))
                == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"\#(method.rawValue) is a notification the daemon sends; clients cannot call it","data":{"status":"UNIMPLEMENTED","method":"\#(method.rawValue)"}}}"#
        )
    }

    static let invalidParams: [InvalidParamsCase] = [
        .init(method: .register, params: "{}", field: "range"),
        .init(method: .register, params: #"{"range":null}"#, field: "range"),
        .init(method: .register, params: #"{"range":[30,60]}"#, field: "range"),
        .init(method: .register, params: #"{"range":{"minimum":"60","maximum":120}}"#, field: "range.minimum"),
        .init(method: .register, params: #"{"range":{"minimum":60}}"#, field: "range.maximum"),
        .init(method: .register, params: #"{"range":{"maximum":60}}"#, field: "range.minimum"),
        .init(method: .register, params: #"{"range":{"minimum":0,"maximum":120}}"#, field: "range.minimum"),
        .init(method: .register, params: #"{"range":{"minimum":-5,"maximum":120}}"#, field: "range.minimum"),
        .init(method: .register, params: #"{"range":{"minimum":90,"maximum":60}}"#, field: "range.maximum"),
        .init(method: .register, params: #"{"range":{"minimum":60,"maximum":2000}}"#, field: "range.maximum"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60,"preferred":120}}"#, field: "range.preferred"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60,"preferred":-1}}"#, field: "range.preferred"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":1e400}}"#, field: "range.maximum"),
        .init(method: .register, params: #"{"range":{"minimum":-1e400,"maximum":60}}"#, field: "range.minimum"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60,"preferred":1e400}}"#, field: "range.preferred"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"colour":"red"}"#, field: "colour"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60,"max":60}}"#, field: "range.max"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"paused":"yes"}"#, field: "paused"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"highFrameRate":1}"#, field: "highFrameRate"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"label":7}"#, field: "label"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"label":"\#(String(repeating: "x", count: 257))"}"#, field: "label"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"display":-1}"#, field: "display"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"display":0.5}"#, field: "display"),
        .init(method: .register, params: #"{"range":{"minimum":30,"maximum":60},"display":"0"}"#, field: "display"),
        .init(method: .register, params: "[30,60]", field: nil),
        .init(method: .update, params: "{}", field: "link"),
        .init(method: .update, params: #"{"link":0}"#, field: "link"),
        .init(method: .update, params: #"{"link":1.5}"#, field: "link"),
        .init(method: .update, params: #"{"link":"1"}"#, field: "link"),
        .init(method: .update, params: #"{"link":1e400}"#, field: "link"),
        .init(method: .update, params: #"{"link":18446744073709551616}"#, field: "link"),
        .init(method: .update, params: #"{"link":1,"range":{"minimum":1e400,"maximum":60}}"#, field: "range.minimum"),
        .init(method: .update, params: #"{"link":1,"paused":0}"#, field: "paused"),
        .init(method: .update, params: #"{"link":1,"label":"x"}"#, field: "label"),
        .init(method: .invalidate, params: "{}", field: "link"),
        .init(method: .invalidate, params: #"{"link":1,"force":true}"#, field: "force"),
        .init(method: .frameDone, params: #"{"link":1}"#, field: "sequence"),
        .init(method: .frameDone, params: #"{"link":1,"sequence":-1}"#, field: "sequence"),
        .init(method: .frameDone, params: #"{"sequence":1}"#, field: "link"),
        .init(method: .getState, params: #"{"verbose":true}"#, field: "verbose"),
        .init(method: .setCaps, params: #"{"thermalState":"hot"}"#, field: "thermalState"),
        .init(method: .setCaps, params: #"{"lowPowerMode":1}"#, field: "lowPowerMode"),
        .init(method: .setCaps, params: #"{"limitFrameRate":"on"}"#, field: "limitFrameRate"),
        .init(method: .setCaps, params: #"{"display":-1}"#, field: "display"),
        .init(method: .watch, params: #"{"kinds":["linkAdded"]}"#, field: "kinds"),
        .init(method: .unwatch, params: "{}", field: "watch"),
        .init(method: .unwatch, params: #"{"watch":0}"#, field: "watch"),
        .init(method: .healthCheck, params: #"{"service":5}"#, field: "service"),
        .init(method: .listServices, params: #"{"all":true}"#, field: "all"),
    ]

    @Test(arguments: invalidParams)
    func invalidParamsNameTheField(_ testCase: InvalidParamsCase) throws {
        let server = ServerHarness()
        let client = try server.connect()
        let error = try client.error(testCase.method, testCase.params)
        #expect(error.code == -32602)
        #expect(error.data?["status"] == "INVALID_ARGUMENT")
        #expect(error.data?["field"]?.stringValue == testCase.field, "\(error.message)")
        // The message names the field too (range rules name it without the "range." prefix).
        if let field = testCase.field?.split(separator: ".").last { #expect(error.message.contains(field), "\(error.message)") }
        // Nothing happened.
        #expect(server.compositor.linkCount == 0)
        #expect(try server.compositor.caps(of: nil) == DisplayCaps())
    }

    @Test func invalidParamsMessagesStateTheRule() throws {
        let client = try ServerHarness().connect()
        #expect(
            try client.request(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":120}}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid range: preferred must be 0 (no preference) or within minimum...maximum (30...60 Hz), got 120","data":{"status":"INVALID_ARGUMENT","field":"range.preferred"}}}"#
        )
        #expect(
            try client.request(.register, #"{"range":{"minimum":30,"maximum":1e400}}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"range.maximum is out of range: 1e400","data":{"status":"INVALID_ARGUMENT","field":"range.maximum"}}}"#
        )
        #expect(
            try client.request(.register, #"{"range":{"minimum":30,"maximum":60},"colour":"red"}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown field 'colour'; params takes adaptive, display, highFrameRate, label, paused, preferredFrameLatency, range, timelines","data":{"status":"INVALID_ARGUMENT","field":"colour"}}}"#
        )
        #expect(
            try client.request(.register, "[30,60]")
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"params must be an object, got array","data":{"status":"INVALID_ARGUMENT"}}}"#
        )
        #expect(try client.error(.getState, #"{"verbose":true}"#).message == "unknown field 'verbose'; params takes no fields")
    }

    @Test func anotherConnectionsLinkIsNotFound() throws {
        let server = ServerHarness()
        let owner = try server.connect()
        let link = try owner.register(60, 60, 60)
        try server.runNextVsync()
        #expect(try owner.lines().count == 1)  // one tick: sequence 1 was delivered
        let other = try server.connect()
        let message = "link \(link) does not exist on this connection (already invalidated, or registered by another client)"
        for (method, params) in [
            (V1Method.update, #"{"link":\#(link),"paused":true}"#), (.invalidate, #"{"link":\#(link)}"#),
            (.frameDone, #"{"link":\#(link),"sequence":1}"#),
        ] {
            #expect(
                try other.request(method, params)
                    == #"{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"\#(message)","data":{"status":"NOT_FOUND"}}}"#
            )
        }
        // A link that never existed looks the same.
        #expect(try other.error(.invalidate, #"{"link":99}"#).message.hasPrefix("link 99 does not exist on this connection"))
        #expect(server.compositor.linkCount == 1)
        #expect(try owner.result(.getState)["displays"]?[0]?["links"]?[0]?["paused"] == false)
    }

    @Test func unknownDisplayIsNotFound() throws {
        let server = ServerHarness()
        let client = try server.connect()
        #expect(
            try client.request(.register, #"{"range":{"minimum":30,"maximum":60},"display":7}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"no display 7; known displays: 0","data":{"status":"NOT_FOUND"}}}"#
        )
        #expect(try client.error(.setCaps, #"{"display":7,"lowPowerMode":true}"#).grpcStatus == .notFound)
        #expect(server.compositor.linkCount == 0)
        #expect(server.compositor.links(of: try #require(server.core.sessions.values.first).owner).isEmpty)
    }

    @Test func frameDoneForAnUndeliveredSequenceIsOutOfRange() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(30, 60, 60)
        #expect(
            try client.request(.frameDone, #"{"link":\#(link),"sequence":5}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":11,"message":"link 1 was never sent sequence 5; the latest tick it was sent is 0","data":{"status":"OUT_OF_RANGE"}}}"#
        )
    }

    @Test func linksPerConnectionLimit() throws {
        let server = ServerHarness(limits: .init(linksPerConnection: 2))
        let client = try server.connect()
        let first = try client.register(30, 60, 60)
        _ = try client.register(30, 60, 60)
        #expect(
            try client.request(.register, #"{"range":{"minimum":30,"maximum":60}}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":8,"message":"this connection already holds 2 links (the limit, --max-links-per-connection); invalidate one or open another connection","data":{"status":"RESOURCE_EXHAUSTED"}}}"#
        )
        #expect(server.compositor.linkCount == 2)
        // The limit is per connection, and freed by Invalidate.
        _ = try server.connect().register(30, 60, 60)
        _ = try client.result(.invalidate, #"{"link":\#(first)}"#)
        _ = try client.register(30, 60, 60)
        #expect(server.compositor.linkCount == 3)
    }

    @Test func batchLimit() throws {
        let server = ServerHarness(limits: .init(batchSize: 2))
        let client = try server.connect()
        let register = requestLine(V1Method.register.rawValue, #"{"range":{"minimum":30,"maximum":60}}"#, id: 1)
        #expect(
            try client.call("[\(register),\(register),\(register)]")
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":8,"message":"batch of 3 requests exceeds the limit of 2","data":{"status":"RESOURCE_EXHAUSTED"}}}"#
        )
        #expect(server.compositor.linkCount == 0)  // nothing in it ran
        #expect(try client.call("[\(register),\(register)]").hasPrefix("[{"))
        #expect(server.compositor.linkCount == 2)
    }

    /// Trace answers with the whole state, as GetState does: a batch of Trace/StopTrace
    /// pairs (ids are predictable) would otherwise encode it 64 times for one line.
    @Test("a batch may hold one whole-document request in all, Trace included")
    func oneWholeDocumentPerBatch() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let trace = requestLine(V1Method.trace.rawValue, nil, id: 1)
        let getState = requestLine(V1Method.getState.rawValue, nil, id: 2)
        let secondTrace = requestLine(V1Method.trace.rawValue, nil, id: 3)
        let reply = try JSONValue(parsing: try client.call("[\(trace),\(getState),\(secondTrace)]"))
        guard case .array(let responses) = reply else {
            Issue.record("not a batch reply: \(reply)")
            return
        }
        #expect(responses.count == 3)
        #expect(responses.first?["result"]?["state"] != nil, "the first whole-document request is answered")
        for refused in responses.dropFirst() {
            #expect(refused["error"]?["data"]?["status"] == "RESOURCE_EXHAUSTED", "\(refused)")
        }
    }

    @Test func connectionLimit() throws {
        let server = ServerHarness(limits: .init(connections: 1, reservedConnections: 0))
        let first = try server.connect()
        let second = try server.connect(Peers.user)
        #expect(
            try second.lines()
                == [
                    #"{"jsonrpc":"2.0","id":null,"error":{"code":8,"message":"framerated already serves 1 connections (the limit, --max-connections); close idle clients or raise it","data":{"status":"RESOURCE_EXHAUSTED"}}}"#
                ]
        )
        #expect(!second.channel.isActive)
        #expect(server.core.sessions.count == 1)
        // The slot is freed when the first connection closes.
        first.close()
        let third = try server.connect(Peers.user)
        #expect(third.channel.isActive)
        #expect(try third.result(.healthCheck) == ["status": "SERVING"])
    }
}

import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSON-RPC server-side classification")
struct JSONRPCInboundTests {
    private func single(_ line: String) throws -> JSONRPCInboundMessage {
        guard case .single(let message) = JSONRPCInbound.parse(line: line) else {
            Issue.record("not a single message: \(line)")
            throw CancellationError()
        }
        return message
    }

    private func invalidError(_ line: String) throws -> (RPCID?, RPCError) {
        guard case .invalid(let id, let error) = try single(line) else {
            Issue.record("not invalid: \(line)")
            throw CancellationError()
        }
        return (id, error)
    }

    @Test func requestAndNotification() throws {
        #expect(
            try single(#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#)
                == .request(id: 1, method: "m", params: [1])
        )
        #expect(try single(#"{"jsonrpc":"2.0","id":"x","method":"m"}"#) == .request(id: "x", method: "m", params: nil))
        #expect(try single(#"{"jsonrpc":"2.0","method":"m","params":{}}"#) == .notification(method: "m", params: [:]))
        #expect(try single(#"{"method":"m","jsonrpc":"2.0","extra":true}"#) == .notification(method: "m", params: nil))
    }

    @Test func nullIDIsARequestAnsweredWithNull() throws {
        #expect(try single(#"{"jsonrpc":"2.0","id":null,"method":"sum","params":[1,2]}"#) == .request(id: nil, method: "sum", params: [1, 2]))
        #expect(
            replyText(#"{"jsonrpc":"2.0","id":null,"method":"sum","params":[1,2]}"#)
                == #"{"jsonrpc":"2.0","id":null,"result":3}"# + "\n"
        )
    }

    static let badJsonrpc: [String] = [
        #"{"id":1,"method":"m"}"#,
        #"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
        #"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
        #"{"jsonrpc":"2.0 ","id":1,"method":"m"}"#,
        #"{"jsonrpc":null,"id":1,"method":"m"}"#,
        #"{"jsonrpc":["2.0"],"id":1,"method":"m"}"#,
    ]

    @Test(arguments: badJsonrpc)
    func wrongJsonrpcEchoesAValidID(_ line: String) throws {
        let (id, error) = try invalidError(line)
        #expect(id == 1)
        #expect(error.code == -32600)
        #expect(error.grpcStatus == .invalidArgument)
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":7}"#, #"{"jsonrpc":"2.0","id":7,"method":1}"#, #"{"jsonrpc":"2.0","id":7,"method":null}"#,
        #"{"jsonrpc":"2.0","id":7,"method":["m"]}"#, #"{"jsonrpc":"2.0","id":7,"method":{}}"#,
        #"{"jsonrpc":"2.0","id":7,"method":"m","params":"x"}"#, #"{"jsonrpc":"2.0","id":7,"method":"m","params":3}"#,
        #"{"jsonrpc":"2.0","id":7,"method":"m","params":null}"#, #"{"jsonrpc":"2.0","id":7,"method":"m","params":true}"#,
    ])
    func wrongMethodOrParams(_ line: String) throws {
        let (id, error) = try invalidError(line)
        #expect(id == 7)
        #expect(error.code == RPCError.invalidRequestCode)
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":{},"method":"m"}"#, #"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":true,"method":"m"}"#, #"{"jsonrpc":"2.0","id":false}"#,
    ])
    func idOfTheWrongTypeIsAnsweredWithNull(_ line: String) throws {
        let (id, error) = try invalidError(line)
        #expect(id == nil)
        #expect(error.code == -32600)
        #expect(replyText(line)?.hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"#) == true)
    }

    @Test(arguments: ["1", "\"x\"", "null", "true", "[[]]"])
    func nonObjectsAreInvalidRequests(_ line: String) throws {
        let inbound = JSONRPCInbound.parse(line: line)
        let messages: [JSONRPCInboundMessage]
        switch inbound {
        case .single(let message): messages = [message]
        case .batch(let batch): messages = batch
        case .batchTooLarge: messages = []
        }
        #expect(messages.count == 1)
        for message in messages {
            guard case .invalid(nil, let error) = message else {
                Issue.record("unexpected \(message)")
                continue
            }
            #expect(error.code == -32600)
        }
    }

    @Test func invalidMessagesWithoutIDStillGetAnAnswer() {
        #expect(replyText(#"{"jsonrpc":"2.0","method":1}"#)?.contains(#""id":null"#) == true)
    }

    @Test func idsAreEchoedByteExactly() {
        for id in ["12345678901234567890", "1.50", "-0", "1e400", "1E+2", #""""#, #""\u00e9\n""#, "0.000"] {
            let reply = replyText(#"{"jsonrpc":"2.0","method":"get_data","id":"# + id + "}")
            // Strings are re-escaped canonically: \u00e9 becomes a raw é.
            let echoed = id == #""\u00e9\n""# ? #""é\n""# : id
            #expect(reply == #"{"jsonrpc":"2.0","id":"# + echoed + #","result":["hello",5]}"# + "\n")
        }
    }

    @Test func reservedMethods() throws {
        let (id, error) = try invalidError(#"{"jsonrpc":"2.0","id":1,"method":"rpc.describe"}"#)
        #expect(id == 1)
        #expect(error == .methodNotFound("rpc.describe"))
        // rpc.discover (OpenRPC) is the one reserved method a request may reach the handler with.
        #expect(
            JSONRPCInboundMessage.classify(try JSONValue(parsing: #"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#))
                == .request(id: 1, method: "rpc.discover", params: nil)
        )
        // A notification to a reserved method is not answered and not dispatched.
        var called = false
        let reply = JSONRPCInbound.parse(line: #"{"jsonrpc":"2.0","method":"rpc.ping"}"#).reply { method, params in
            called = true
            return SpecHandler.handle(method, params)
        }
        #expect(reply == nil)
        #expect(!called)
        // "rpc" without the period, and "RPC.", are ordinary names.
        #expect(try single(#"{"jsonrpc":"2.0","id":1,"method":"rpcx"}"#) == .request(id: 1, method: "rpcx", params: nil))
        #expect(try single(#"{"jsonrpc":"2.0","id":1,"method":"RPC.x"}"#) == .request(id: 1, method: "RPC.x", params: nil))
    }

    @Test func parseErrorsAreSingleWithNullID() throws {
        for line in ["", "{", "NaN", "[1,2", String(repeating: "[", count: 10_000)] {
            let (id, error) = try invalidError(line)
            #expect(id == nil)
            #expect(error.code == -32700)
            #expect(error.grpcStatus == .invalidArgument)
        }
        let (_, deep) = try invalidError(String(repeating: "[", count: 10_000))
        #expect(deep.data?["detail"] == "nesting deeper than 64 levels at byte 64")
    }

    @Test func invalidUTF8IsAParseError() throws {
        var line = ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"m"#)
        line.writeBytes([0xFF])
        line.writeString(#""}"#)
        guard case .single(.invalid(nil, let error)) = JSONRPCInbound.parse(line: line) else {
            Issue.record("expected a parse error")
            return
        }
        #expect(error.code == -32700)
        #expect(error.data?["detail"] == "invalid UTF-8 at byte 35")
    }

    @Test func batchLimit() throws {
        let element = #"{"jsonrpc":"2.0","id":1,"method":"sum","params":[1]}"#
        let configuration = JSONRPCInbound.Configuration(maximumBatchSize: 3)
        let ok = "[" + Array(repeating: element, count: 3).joined(separator: ",") + "]"
        guard case .batch(let messages) = JSONRPCInbound.parse(line: ok, configuration: configuration) else {
            Issue.record("expected a batch")
            return
        }
        #expect(messages.count == 3)

        let tooMany = "[" + Array(repeating: element, count: 4).joined(separator: ",") + "]"
        let inbound = JSONRPCInbound.parse(line: tooMany, configuration: configuration)
        #expect(inbound == .batchTooLarge(count: 4, limit: 3))
        var called = false
        let reply = inbound.reply { _, _ in
            called = true
            return .success(.null)
        }
        #expect(!called)
        #expect(
            reply.map { String(buffer: $0) }
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":8,"message":"batch of 4 requests exceeds the limit of 3","data":{"status":"RESOURCE_EXHAUSTED"}}}"#
                + "\n"
        )
        let error = RPCError.batchTooLarge(count: 4, limit: 3)
        #expect(error.grpcStatus == .resourceExhausted)
        #expect(JSONRPCInbound.Configuration().maximumBatchSize == 128)
    }

    @Test func batchElementsAreClassifiedIndependently() {
        let line = #"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},[],{"jsonrpc":"2.0","id":[],"method":"c"},{"jsonrpc":"2.0","id":2,"method":"rpc.x"}]"#
        guard case .batch(let messages) = JSONRPCInbound.parse(line: line) else {
            Issue.record("expected a batch")
            return
        }
        #expect(messages.count == 5)
        #expect(messages[0] == .request(id: 1, method: "a", params: nil))
        #expect(messages[1] == .notification(method: "b", params: nil))
        #expect(messages.map(\.expectsResponse) == [true, false, true, true, true])
        if case .invalid(nil, let error) = messages[2] { #expect(error.code == -32600) } else { Issue.record("\(messages[2])") }
        if case .invalid(nil, let error) = messages[3] { #expect(error.code == -32600) } else { Issue.record("\(messages[3])") }
        #expect(messages[4] == .invalid(id: 2, error: .methodNotFound("rpc.x")))
    }

    @Test func handlerErrorsBecomeErrorResponses() {
        let reply = replyText(#"{"jsonrpc":"2.0","id":9,"method":"subtract","params":{"minuend":"x"}}"#)
        #expect(
            reply
                == #"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"minuend must be an integer","data":{"status":"INVALID_ARGUMENT","field":"minuend"}}}"#
                + "\n"
        )
        let notFound = replyText(#"{"jsonrpc":"2.0","id":9,"method":"x"}"#) { _, _ in
            .failure(.status(.notFound, "no display 3"))
        }
        #expect(notFound == #"{"jsonrpc":"2.0","id":9,"error":{"code":5,"message":"no display 3","data":{"status":"NOT_FOUND"}}}"# + "\n")
    }

    @Test func responsesListMatchesReply() {
        let inbound = JSONRPCInbound.parse(line: #"[{"jsonrpc":"2.0","id":1,"method":"sum","params":[2]},{"jsonrpc":"2.0","method":"sum"}]"#)
        let responses = inbound.responses(handler: SpecHandler.handle)
        #expect(responses == [.response(id: 1, result: .success(2))])
    }

    @Test func allInputFormsAgree() {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"m"}"#
        let expected = JSONRPCInbound.parse(line: line)
        #expect(JSONRPCInbound.parse(line: ByteBuffer(string: line)) == expected)
        #expect(JSONRPCInbound.parse(line: Array(line.utf8)) == expected)
    }
}

import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSON-RPC client-side classification")
struct JSONRPCClientInboundTests {
    @Test func responsesAndNotifications() throws {
        #expect(
            try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","id":1,"result":{"hz":60}}"#)
                == .single(.response(id: 1, result: .success(["hz": 60])))
        )
        #expect(
            try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","id":"a","result":null}"#)
                == .single(.response(id: "a", result: .success(.null)))
        )
        #expect(
            try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","method":"tick","params":[1]}"#)
                == .single(.notification(method: "tick", params: [1]))
        )
        #expect(
            try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","method":"bye"}"#)
                == .single(.notification(method: "bye", params: nil))
        )
    }

    @Test func errorResponses() throws {
        let line = #"{"jsonrpc":"2.0","id":null,"error":{"code":8,"message":"too big","data":{"status":"RESOURCE_EXHAUSTED"}}}"#
        guard case .single(.response(nil, .failure(let error))) = try JSONRPCClientInbound.parse(line: line) else {
            Issue.record("expected an error response")
            return
        }
        #expect(error == .status(.resourceExhausted, "too big"))
        #expect(error.grpcStatus == .resourceExhausted)

        let bare = try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#)
        #expect(bare == .single(.response(id: 1, result: .failure(RPCError(code: -32601, message: "Method not found")))))
        if case .single(.response(_, .failure(let error))) = bare {
            #expect(error.grpcStatus == .unimplemented)
        }
    }

    @Test func everyServerReplyParsesOnTheClient() throws {
        for example in JSONRPCSpecExampleTests.examples {
            guard let reply = replyText(example.request) else { continue }
            let inbound = try JSONRPCClientInbound.parse(line: ByteBuffer(string: String(reply.dropLast())))
            #expect(!inbound.messages.isEmpty)
        }
    }

    @Test func batches() throws {
        let line = #"[{"jsonrpc":"2.0","id":1,"result":7},{"jsonrpc":"2.0","id":"2","error":{"code":5,"message":"nope"}}]"#
        let inbound = try JSONRPCClientInbound.parse(line: Array(line.utf8))
        #expect(
            inbound
                == .batch([
                    .response(id: 1, result: .success(7)),
                    .response(id: "2", result: .failure(RPCError(code: 5, message: "nope"))),
                ])
        )
        #expect(inbound.messages.count == 2)
    }

    @Test func idsKeepTheirExactText() throws {
        let inbound = try JSONRPCClientInbound.parse(line: #"{"jsonrpc":"2.0","id":12345678901234567890,"result":0}"#)
        #expect(inbound == .single(.response(id: .number(JSONNumber(text: "12345678901234567890")!), result: .success(0))))
    }

    @Test(arguments: [
        "", "{", "[]", "1", "[1]", "{}", #"{"jsonrpc":"2.0"}"#,
        #"{"jsonrpc":"1.0","id":1,"result":1}"#,
        #"{"id":1,"result":1}"#,
        #"{"jsonrpc":"2.0","id":1}"#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"error":"bad"}"#,
        #"{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
        #"{"jsonrpc":"2.0","id":true,"result":1}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
        #"{"jsonrpc":"2.0","method":3}"#,
        #"{"jsonrpc":"2.0","method":"m","params":1}"#,
        #"[{"jsonrpc":"2.0","id":1,"result":1},2]"#,
    ])
    func malformed(_ line: String) {
        #expect(throws: JSONRPCClientInboundError.self) { try JSONRPCClientInbound.parse(line: line) }
    }

    @Test func parseErrorsCarryTheJSONError() throws {
        do {
            _ = try JSONRPCClientInbound.parse(line: "[1,")
            Issue.record("expected an error")
        } catch {
            #expect(error.parseError?.kind == .unexpectedEndOfInput)
            #expect(error.message.hasPrefix("invalid JSON: "))
        }
        do {
            _ = try JSONRPCClientInbound.parse(line: #"[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0"}]"#)
            Issue.record("expected an error")
        } catch {
            #expect(error.parseError == nil)
            #expect(error.message.hasPrefix("batch element 1: "))
        }
    }
}

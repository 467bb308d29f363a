import FrameRateProtocol
import NIOCore
import Testing

/// Every example of the "Examples" section of https://www.jsonrpc.org/specification, with
/// the exact reply lines framerated sends (compact, `jsonrpc` then `id` then `result`/`error`,
/// and `data.status` on every error).
@Suite("JSON-RPC 2.0 specification examples")
struct JSONRPCSpecExampleTests {
    struct Example: CustomTestStringConvertible, Sendable {
        let name: String
        let request: String
        let reply: String?
        var testDescription: String { name }
    }

    static let examples: [Example] = [
        Example(
            name: "positional parameters 1",
            request: #"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#,
            reply: #"{"jsonrpc":"2.0","id":1,"result":19}"# + "\n"
        ),
        Example(
            name: "positional parameters 2",
            request: #"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#,
            reply: #"{"jsonrpc":"2.0","id":2,"result":-19}"# + "\n"
        ),
        Example(
            name: "named parameters 1",
            request: #"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
            reply: #"{"jsonrpc":"2.0","id":3,"result":19}"# + "\n"
        ),
        Example(
            name: "named parameters 2",
            request: #"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
            reply: #"{"jsonrpc":"2.0","id":4,"result":19}"# + "\n"
        ),
        Example(
            name: "notification with params",
            request: #"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#,
            reply: nil
        ),
        Example(
            name: "notification without params",
            request: #"{"jsonrpc": "2.0", "method": "foobar"}"#,
            reply: nil
        ),
        Example(
            name: "non-existent method",
            request: #"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#,
            reply: #"{"jsonrpc":"2.0","id":"1","error":{"code":-32601,"message":"Method not found","data":{"status":"UNIMPLEMENTED","method":"foobar"}}}"#
                + "\n"
        ),
        Example(
            name: "invalid JSON",
            request: #"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
            reply: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"status":"INVALID_ARGUMENT","detail":"unexpected character 'p' at byte 39; expected ',' or '}'"}}}"#
                + "\n"
        ),
        Example(
            name: "invalid Request object",
            request: #"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
            reply: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"method must be a string, not number"}}}"#
                + "\n"
        ),
        Example(
            name: "batch, invalid JSON",
            request: """
                [
                  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
                  {"jsonrpc": "2.0", "method"
                ]
                """,
            reply: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"status":"INVALID_ARGUMENT","detail":"unexpected character ']' at byte 101; expected ':'"}}}"#
                + "\n"
        ),
        Example(
            name: "empty array",
            request: "[]",
            reply: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"a batch must not be empty"}}}"#
                + "\n"
        ),
        Example(
            name: "invalid batch, not empty",
            request: "[1]",
            reply: #"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"a request must be an object, not number"}}}]"#
                + "\n"
        ),
        Example(
            name: "invalid batch",
            request: "[1,2,3]",
            reply: "["
                + Array(
                    repeating: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"a request must be an object, not number"}}}"#,
                    count: 3
                ).joined(separator: ",") + "]\n"
        ),
        Example(
            name: "mixed batch",
            request: """
                [
                    {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
                    {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
                    {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
                    {"foo": "boo"},
                    {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
                    {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
                ]
                """,
            reply: "["
                + [
                    #"{"jsonrpc":"2.0","id":"1","result":7}"#,
                    #"{"jsonrpc":"2.0","id":"2","result":19}"#,
                    #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"jsonrpc must be exactly \"2.0\""}}}"#,
                    #"{"jsonrpc":"2.0","id":"5","error":{"code":-32601,"message":"Method not found","data":{"status":"UNIMPLEMENTED","method":"foo.get"}}}"#,
                    #"{"jsonrpc":"2.0","id":"9","result":["hello",5]}"#,
                ].joined(separator: ",") + "]\n"
        ),
        Example(
            name: "batch of notifications",
            request: """
                [
                    {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
                    {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
                ]
                """,
            reply: nil
        ),
    ]

    @Test(arguments: examples)
    func exactReply(_ example: Example) {
        #expect(replyText(example.request) == example.reply)
    }

    @Test func notificationsInABatchAreExecutedInOrderButNotAnswered() {
        var calls: [String] = []
        let line = #"[{"jsonrpc":"2.0","method":"notify_sum","params":[1]},{"jsonrpc":"2.0","method":"sum","params":[2],"id":1},{"jsonrpc":"2.0","method":"notify_hello"}]"#
        let reply = JSONRPCInbound.parse(line: line).reply { method, params in
            calls.append(method)
            return SpecHandler.handle(method, params)
        }
        #expect(calls == ["notify_sum", "sum", "notify_hello"])
        #expect(reply.map { String(buffer: $0) } == #"[{"jsonrpc":"2.0","id":1,"result":2}]"# + "\n")
    }
}

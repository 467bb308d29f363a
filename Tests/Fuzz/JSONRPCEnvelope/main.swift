// Fuzz target: the JSON-RPC 2.0 envelope (JSONRPCInbound.parse, classification, reply).
//
// The line is answered by a handler that echoes `params`, or fails with an error whose
// message quotes the method, depending on the method name. Invariants:
// - parsing bytes, a ByteBuffer and (for valid UTF-8) a String classify the same way;
// - the reply is nil exactly when nothing is owed (only notifications), else one line:
//   compact JSON, one trailing `\n` and no other;
// - every response is a JSON-RPC 2.0 response object (`jsonrpc` "2.0", an `id`, exactly one
//   of `result` / `error`, an error with an integer `code` and a string `message`);
// - a batch reply holds one response per owed message, with their ids, in order.
import FrameRateProtocol
import FuzzSupport
import NIOCore

func handle(method: String, params: JSONValue?) -> Result<JSONValue, RPCError> {
    if method.utf8.count % 2 == 0 { return .success(params ?? .null) }
    return .failure(.status(.notFound, "no such method '\(method)'"))
}

func checkResponse(_ response: JSONValue, id expected: RPCID?) {
    guard case .object(let object) = response else { fatalError("invariant violated: response is not an object") }
    check(object["jsonrpc"] == .string("2.0"), "response without jsonrpc 2.0")
    check(object.contains(key: "id"), "response without id")
    check(object["id"] == (expected?.jsonValue ?? .null), "response id differs from the request's")
    let hasResult = object.contains(key: "result")
    let hasError = object.contains(key: "error")
    check(hasResult != hasError, "response must hold exactly one of result and error")
    if hasError {
        guard case .object(let error) = object["error"] else { fatalError("invariant violated: error is not an object") }
        check(error["code"]?.numberValue?.int64Value != nil, "error code is not an integer")
        check(error["message"]?.stringValue != nil, "error message is not a string")
    }
}

/// The ids of the responses owed for `inbound`, in order (`nil` stands for `"id": null`).
func owedIDs(_ inbound: JSONRPCInbound) -> [RPCID?] {
    func id(of message: JSONRPCInboundMessage) -> [RPCID?] {
        switch message {
        case .request(let id, _, _), .invalid(let id, _): [id]
        case .notification: []
        }
    }
    switch inbound {
    case .single(let message): return id(of: message)
    case .batch(let messages): return messages.flatMap(id(of:))
    case .batchTooLarge: return [nil]
    }
}

runFuzzer { data, size in
    let line = bytes(data, size)
    let inbound = JSONRPCInbound.parse(line: line)
    check(JSONRPCInbound.parse(line: ByteBuffer(bytes: line)) == inbound, "ByteBuffer parse differs")
    if let text = String(validating: line, as: UTF8.self) {
        check(JSONRPCInbound.parse(line: text) == inbound, "String parse differs")
    }

    let owed = owedIDs(inbound)
    guard let reply = inbound.reply(handler: handle) else {
        check(owed.isEmpty, "no reply although \(owed.count) responses are owed")
        return 0
    }
    check(!owed.isEmpty, "a reply although none is owed")
    let replyBytes = Array(reply.readableBytesView)
    check(replyBytes.last == 0x0A, "reply does not end with a newline")
    check(replyBytes.dropLast().firstIndex(of: 0x0A) == nil, "reply holds more than one line")
    guard let value = try? JSONParser().parse(replyBytes.dropLast()) else {
        fatalError("invariant violated: reply is not JSON")
    }
    switch inbound {
    case .batch:
        guard case .array(let responses) = value else { fatalError("invariant violated: batch reply is not an array") }
        check(responses.count == owed.count, "batch reply holds \(responses.count) responses for \(owed.count) owed")
        for (response, id) in zip(responses, owed) { checkResponse(response, id: id) }
    case .single, .batchTooLarge:
        check(owed.count == 1, "one reply for \(owed.count) owed")
        checkResponse(value, id: owed[0])
    }
    return 0
}

public import NIOCore

/// A JSON-RPC 2.0 message to send: a response (server), a notification (either side) or a
/// request (client).
///
/// Members are written in a fixed order: `jsonrpc`, then `id`, then `method` and `params`, or
/// `result` / `error`. Absent `params` are omitted; a successful response always has `result`
/// (use `.null` for "no value").
public enum JSONRPCOutboundMessage: Sendable, Hashable {
    /// A request; `params` should be an array or an object.
    case request(id: RPCID, method: String, params: JSONValue?)
    /// A notification; `params` should be an array or an object.
    case notification(method: String, params: JSONValue?)
    /// A response; `id` `nil` is written as `null`.
    case response(id: RPCID?, result: Result<JSONValue, RPCError>)
    /// A successful response whose `result` is already encoded JSON (a cached, large
    /// result such as GetState's, written without serializing it again).
    case encodedResponse(id: RPCID?, result: ByteBuffer)

    /// The message as a JSON object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["jsonrpc": "2.0"]
        switch self {
        case .request(let id, let method, let params):
            object["id"] = id.jsonValue
            object["method"] = .string(method)
            Self.assertStructured(params)
            if let params { object["params"] = params }
        case .notification(let method, let params):
            object["method"] = .string(method)
            Self.assertStructured(params)
            if let params { object["params"] = params }
        case .response(let id, .success(let result)):
            object["id"] = id.jsonValue
            object["result"] = result
        case .response(let id, .failure(let error)):
            object["id"] = id.jsonValue
            object["error"] = error.jsonValue
        case .encodedResponse(let id, let result):
            object["id"] = id.jsonValue
            object["result"] = (try? JSONParser().parse(result)) ?? .null
        }
        return .object(object)
    }

    /// Writes the message as JSON (without a newline), splicing in an encoded result as is.
    private func write(into buffer: inout ByteBuffer) {
        guard case .encodedResponse(let id, let result) = self else {
            buffer.writeJSONValue(self.jsonValue)
            return
        }
        buffer.writeString(#"{"jsonrpc":"2.0","id":"#)
        buffer.writeJSONValue(id.jsonValue)
        buffer.writeString(#","result":"#)
        buffer.writeImmutableBuffer(result)
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// Appends the message as one line: compact JSON and a single `\n`.
    public func writeLine(into buffer: inout ByteBuffer) {
        self.write(into: &buffer)
        buffer.writeInteger(ASCII.newline)
    }

    /// The message as one line: compact JSON and a single `\n`.
    public var line: String {
        self.jsonValue.jsonString + "\n"
    }

    /// Appends `messages` as one batch line (`[...]` and `\n`), or nothing when `messages` is
    /// empty (JSON-RPC never sends an empty array). Returns whether anything was written.
    @discardableResult
    public static func writeBatchLine(_ messages: [JSONRPCOutboundMessage], into buffer: inout ByteBuffer) -> Bool {
        guard !messages.isEmpty else { return false }
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, message) in messages.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            message.write(into: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
        buffer.writeInteger(ASCII.newline)
        return true
    }

    private static func assertStructured(_ params: JSONValue?) {
        switch params {
        case nil, .array?, .object?: break
        default: assertionFailure("JSON-RPC params must be an array or an object")
        }
    }
}

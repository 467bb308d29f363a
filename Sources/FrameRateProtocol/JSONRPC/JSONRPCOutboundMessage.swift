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
        }
        return .object(object)
    }

    /// Appends the message as one line: compact JSON and a single `\n`.
    public func writeLine(into buffer: inout ByteBuffer) {
        buffer.writeJSONValue(self.jsonValue)
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
        buffer.writeJSONValue(.array(messages.map(\.jsonValue)))
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

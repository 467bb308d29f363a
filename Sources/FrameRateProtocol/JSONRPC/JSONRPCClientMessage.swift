/// One message the daemon sent to a client.
public enum JSONRPCClientMessage: Sendable, Hashable {
    /// The response to the request with this `id`; `id` is `nil` for `"id": null`, which the
    /// server uses when it could not read the request's id (parse errors, invalid requests,
    /// oversized lines or batches).
    case response(id: RPCID?, result: Result<JSONValue, RPCError>)
    /// A notification from the daemon; `params`, when present, is an array or an object.
    case notification(method: String, params: JSONValue?)

    /// Reads one response or notification object.
    ///
    /// A response has `"jsonrpc":"2.0"`, an `id` (string, number or null) and exactly one of
    /// `result` and `error` (an object with an integer `code` and a string `message`). A
    /// notification has `"jsonrpc":"2.0"`, a string `method`, no `id`, and optional array or
    /// object `params`. Requests from the daemon (`method` and `id`) are not part of the
    /// protocol and are rejected. Unknown extra members are ignored.
    public init(_ value: JSONValue) throws(JSONRPCClientInboundError) {
        guard case .object(let object) = value else {
            throw JSONRPCClientInboundError("a message must be an object, not \(value.typeName)")
        }
        guard object["jsonrpc"] == .string("2.0") else {
            throw JSONRPCClientInboundError("jsonrpc must be exactly \"2.0\"")
        }
        if let method = object["method"] {
            guard !object.contains(key: "id") else {
                throw JSONRPCClientInboundError("requests from the server are not supported")
            }
            guard case .string(let name) = method else {
                throw JSONRPCClientInboundError("method must be a string, not \(method.typeName)")
            }
            let params = object["params"]
            switch params {
            case nil, .array?, .object?: break
            case let other?:
                throw JSONRPCClientInboundError("params must be an array or an object, not \(other.typeName)")
            }
            self = .notification(method: name, params: params)
            return
        }
        guard let idValue = object["id"] else {
            throw JSONRPCClientInboundError("a message needs either an id or a method")
        }
        var id: RPCID?
        if !idValue.isNull {
            guard let valid = RPCID(idValue) else {
                throw JSONRPCClientInboundError("id must be a string, a number or null, not \(idValue.typeName)")
            }
            id = valid
        }
        switch (object["result"], object["error"]) {
        case (let result?, nil):
            self = .response(id: id, result: .success(result))
        case (nil, let errorValue?):
            guard let error = RPCError(errorValue) else {
                throw JSONRPCClientInboundError("error must be an object with an integer code and a string message")
            }
            self = .response(id: id, result: .failure(error))
        case (nil, nil):
            throw JSONRPCClientInboundError("a response needs a result or an error")
        case (_?, _?):
            throw JSONRPCClientInboundError("a response must not have both a result and an error")
        }
    }
}

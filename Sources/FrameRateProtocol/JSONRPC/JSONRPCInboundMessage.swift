/// One element of what a client sent to the server, classified by the JSON-RPC 2.0 rules.
public enum JSONRPCInboundMessage: Sendable, Hashable {
    /// A request that must be answered. `id` is `nil` when the request carried `"id": null`,
    /// which the specification discourages but allows; the response then has `"id": null`.
    /// `params`, when present, is an array or an object.
    case request(id: RPCID?, method: String, params: JSONValue?)
    /// A notification (no `id` member): executed, never answered, not even with an error.
    /// `params`, when present, is an array or an object.
    case notification(method: String, params: JSONValue?)
    /// Something that must be answered with `error`. `id` is the request's id when it could
    /// be read (a string or number), else `nil` (answered with `"id": null`).
    case invalid(id: RPCID?, error: RPCError)

    /// Whether a reply is owed for this message (everything except notifications).
    public var expectsResponse: Bool {
        if case .notification = self { return false }
        return true
    }

    /// The prefix of method names reserved by JSON-RPC 2.0 for rpc-internal methods and
    /// extensions.
    public static let reservedMethodPrefix = "rpc."

    /// Classifies one request object.
    ///
    /// Rules (JSON-RPC 2.0, section 4), in order:
    /// - A non-object is an invalid request with id `null`.
    /// - `id`, if present, must be a string, number or `null`; any other type makes the
    ///   message an invalid request with id `null`.
    /// - `jsonrpc` must be exactly the string `"2.0"`, `method` a string, `params` (if
    ///   present) an array or object; otherwise -32600 Invalid Request, echoing the id when
    ///   it was valid. Such errors are answered even when there is no `id` member (the
    ///   message is not a valid notification, and the specification's examples answer it).
    /// - Members other than `jsonrpc`, `method`, `params` and `id` are ignored.
    /// - Without an `id` member it is a notification, otherwise a request.
    /// - Method names starting with `rpc.` are reserved; framerated implements only
    ///   ``OpenRPCDocument/discoverMethod`` (`rpc.discover`). A *request* to any other is
    ///   answered -32601 Method not found (as the specification prescribes for any method
    ///   that does not exist). A *notification* to one (`rpc.discover` included) is still
    ///   classified as a notification, so that it is not answered; ``JSONRPCInbound/reply(allocator:handler:)``
    ///   drops it without calling the handler.
    public static func classify(_ value: JSONValue) -> JSONRPCInboundMessage {
        guard case .object(let object) = value else {
            return .invalid(id: nil, error: .invalidRequest(detail: "a request must be an object, not \(value.typeName)"))
        }
        let hasID = object.contains(key: "id")
        var id: RPCID?
        if let idValue = object["id"], !idValue.isNull {
            guard let valid = RPCID(idValue) else {
                return .invalid(
                    id: nil,
                    error: .invalidRequest(detail: "id must be a string, a number or null, not \(idValue.typeName)")
                )
            }
            id = valid
        }
        guard object["jsonrpc"] == .string("2.0") else {
            return .invalid(id: id, error: .invalidRequest(detail: "jsonrpc must be exactly \"2.0\""))
        }
        guard let methodValue = object["method"] else {
            return .invalid(id: id, error: .invalidRequest(detail: "method is missing"))
        }
        guard case .string(let method) = methodValue else {
            return .invalid(id: id, error: .invalidRequest(detail: "method must be a string, not \(methodValue.typeName)"))
        }
        let params = object["params"]
        if let params {
            switch params {
            case .array, .object: break
            default:
                return .invalid(
                    id: id,
                    error: .invalidRequest(detail: "params must be an array or an object, not \(params.typeName)")
                )
            }
        }
        guard hasID else {
            return .notification(method: method, params: params)
        }
        if method.hasPrefix(reservedMethodPrefix), method != OpenRPCDocument.discoverMethod {
            return .invalid(id: id, error: .methodNotFound(method))
        }
        return .request(id: id, method: method, params: params)
    }
}

/// What `rpc.discover` answers: an OpenRPC 1.3 document (spec.open-rpc.org) of protocol v1,
/// generated from ``ServiceCatalog`` (the table that also drives `ListServices` and
/// names every method dispatch accepts), so that it cannot drift from either.
///
/// - `methods`: every method a client may call, with its params by name (`paramStructure`
///   `by-name`), its result schema and its errors: INVALID_ARGUMENT (-32602) for bad params,
///   then each gRPC status it fails with (`code` is the status number, as the daemon sends it).
///   Streaming methods carry `x-streams`, the notification that follows their reply.
/// - `x-notifications`: the notifications the daemon sends (Tick, Closed, Event), with their
///   params; OpenRPC has no place for server-to-client messages, and a client cannot call them.
/// - `info.version` is the daemon's semantic version (`unknown` for a server given none);
///   `info.x-commit` its git commit, when known.
///
/// `rpc.discover` itself is not listed, as the OpenRPC specification prescribes.
public enum OpenRPCDocument {
    /// The OpenRPC specification version the document follows.
    public static let specificationVersion = "1.3.2"
    /// The discovery method's name (reserved by JSON-RPC 2.0's `rpc.` prefix; OpenRPC defines it).
    public static let discoverMethod = "rpc.discover"

    /// The document for a daemon of `version`.
    public static func jsonValue(version: DaemonVersion?) -> JSONValue {
        var info: JSONObject = [
            "title": "framerated",
            "description": """
                Frame-rate hint broker: display links with frame-rate ranges, one refresh rate per display, \
                ticks on its vsyncs. Newline-delimited JSON-RPC 2.0 over a Unix socket.
                """,
            "version": .string(version?.semantic ?? "unknown"),
        ]
        if let commit = version?.commit { info["x-commit"] = .string(commit) }
        return [
            "openrpc": .string(specificationVersion),
            "info": .object(info),
            "servers": [["name": "system daemon", "url": .string("unix://" + SocketPath.system)]],
            "methods": .array(ServiceCatalog.methods.filter { $0.kind != .daemonNotification }.map(method)),
            "x-notifications": .array(ServiceCatalog.methods.filter { $0.kind == .daemonNotification }.map(notification)),
        ]
    }

    private static func method(_ method: ServiceCatalog.Method) -> JSONValue {
        var object: JSONObject = [
            "name": .string(method.method.rawValue),
            "summary": .string(method.summary),
            "tags": [["name": .string(method.method.service)], ["name": .string(method.kind.rawValue)]],
            "paramStructure": "by-name",
            "params": params(method.params),
            "result": [
                "name": .string(method.method.method + "Result"),
                "schema": FieldSchema.object(method.result),
            ],
            "errors": .array(
                [error(code: RPCError.invalidParamsCode, status: .invalidArgument, message: "Invalid params")]
                    + method.errors.map { error(code: $0.rawValue, status: $0, message: $0.name) }
            ),
        ]
        if let streams = method.streams { object["x-streams"] = .string(streams.rawValue) }
        return .object(object)
    }

    private static func notification(_ method: ServiceCatalog.Method) -> JSONValue {
        ["name": .string(method.method.rawValue), "summary": .string(method.summary), "params": params(method.params)]
    }

    private static func params(_ fields: [ServiceCatalog.Field]) -> JSONValue {
        .array(
            FieldSchema.members(fields).map { member in
                ["name": .string(member.name), "required": .bool(member.required), "schema": member.schema]
            }
        )
    }

    private static func error(code: Int, status: GRPCStatusCode, message: String) -> JSONValue {
        ["code": .number(JSONNumber(code)), "message": .string(message), "data": ["status": .string(status.name)]]
    }
}

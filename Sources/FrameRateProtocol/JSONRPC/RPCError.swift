import UntrustedText

/// A JSON-RPC 2.0 error object: `{"code":...,"message":...,"data":...}`.
///
/// framerated always puts an object with a `status` member (a ``GRPCStatusCode`` name) in
/// `data`, so every error maps onto a gRPC status:
///
/// | JSON-RPC code | meaning          | `data.status`      |
/// |---------------|------------------|--------------------|
/// | -32700        | parse error      | `INVALID_ARGUMENT` |
/// | -32600        | invalid request  | `INVALID_ARGUMENT` |
/// | -32601        | method not found | `UNIMPLEMENTED`    |
/// | -32602        | invalid params   | `INVALID_ARGUMENT` |
/// | -32603        | internal error   | `INTERNAL`         |
/// | 1...16        | application error, the gRPC code itself | its name |
///
/// Extra members of `data` (`detail`, `field`, `method`) are informative only.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code.
    public var code: Int
    /// A short description.
    public var message: String
    /// Additional information, if any.
    public var data: JSONValue?

    /// Creates an error object exactly as given.
    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// -32700: invalid JSON was received.
    public static let parseErrorCode = -32700
    /// -32600: the JSON is not a valid request object.
    public static let invalidRequestCode = -32600
    /// -32601: the method does not exist or is not available.
    public static let methodNotFoundCode = -32601
    /// -32602: invalid method parameters.
    public static let invalidParamsCode = -32602
    /// -32603: internal JSON-RPC error.
    public static let internalErrorCode = -32603

    /// -32700 `Parse error`.
    public static var parseError: RPCError {
        standard(parseErrorCode, "Parse error", .invalidArgument)
    }

    /// -32700 `Parse error`, with the parser's explanation in `data.detail`.
    public static func parseError(detail: String) -> RPCError {
        standard(parseErrorCode, "Parse error", .invalidArgument, extra: ["detail": .string(detail)])
    }

    /// -32600 `Invalid Request`.
    public static var invalidRequest: RPCError {
        standard(invalidRequestCode, "Invalid Request", .invalidArgument)
    }

    /// -32600 `Invalid Request`, with what is wrong in `data.detail`.
    public static func invalidRequest(detail: String) -> RPCError {
        standard(invalidRequestCode, "Invalid Request", .invalidArgument, extra: ["detail": .string(detail)])
    }

    /// -32601 `Method not found`, naming the method in `data.method` as ``EchoedValue`` quotes
    /// names (at most 128 characters, invisible characters named), so a 1 MiB method name is
    /// not echoed back in full.
    public static func methodNotFound(_ method: String) -> RPCError {
        let shown = EchoedValue.text(method, limit: EchoedValue.nameLimit)
        return standard(methodNotFoundCode, "Method not found", .unimplemented, extra: ["method": .string(shown)])
    }

    /// -32602 with `message`, and the offending parameter (e.g. `"hz"` or `"range.min"`) in
    /// `data.field` when there is one: `{"status":"INVALID_ARGUMENT","field":"hz"}`.
    public static func invalidParams(field: String?, _ message: String) -> RPCError {
        let extra: JSONObject = field.map { ["field": .string($0)] } ?? [:]
        return standard(invalidParamsCode, message, .invalidArgument, extra: extra)
    }

    /// -32603 `Internal error`.
    public static var internalError: RPCError {
        standard(internalErrorCode, "Internal error", .internalError)
    }

    /// -32603 `Internal error`, with an explanation in `data.detail`.
    public static func internalError(detail: String) -> RPCError {
        standard(internalErrorCode, "Internal error", .internalError, extra: ["detail": .string(detail)])
    }

    /// An application error: `code` is the gRPC code number and `data.status` its name,
    /// e.g. `{"code":5,"message":"no such display","data":{"status":"NOT_FOUND"}}`.
    ///
    /// - Precondition: `status` is not ``GRPCStatusCode/ok``.
    public static func status(_ status: GRPCStatusCode, _ message: String) -> RPCError {
        precondition(status != .ok, "OK is not an error")
        return RPCError(code: status.rawValue, message: message, data: ["status": .string(status.name)])
    }

    /// `RESOURCE_EXHAUSTED` (8) for a batch with more than `limit` elements; it answers the
    /// whole batch.
    public static func batchTooLarge(count: Int, limit: Int) -> RPCError {
        status(.resourceExhausted, "batch of \(count) requests exceeds the limit of \(limit)")
    }

    /// -32600 `Invalid Request` for a line longer than `limit` bytes (see
    /// ``NDJSONFrame/oversized(limit:)``); the server sends it with id `null`, then closes the
    /// connection.
    public static func lineTooLong(limit: Int) -> RPCError {
        invalidRequest(detail: "line longer than \(limit) bytes")
    }

    /// The gRPC status this error maps to: `data.status` if it names a code, else derived
    /// from ``code`` (the table above; unknown codes give ``GRPCStatusCode/unknown``).
    public var grpcStatus: GRPCStatusCode {
        if let name = self.data?["status"]?.stringValue, let status = GRPCStatusCode(name: name) {
            return status
        }
        switch self.code {
        case Self.parseErrorCode, Self.invalidRequestCode, Self.invalidParamsCode: return .invalidArgument
        case Self.methodNotFoundCode: return .unimplemented
        case Self.internalErrorCode: return .internalError
        case 1...16: return GRPCStatusCode(rawValue: self.code) ?? .unknown
        default: return .unknown
        }
    }

    /// The error object as JSON (`data` omitted when `nil`).
    public var jsonValue: JSONValue {
        var object: JSONObject = ["code": .number(JSONNumber(self.code)), "message": .string(self.message)]
        if let data = self.data {
            object["data"] = data
        }
        return .object(object)
    }

    /// Reads an error object: `code` must be an integer, `message` a string, `data` anything.
    /// Returns `nil` if `value` is not such an object.
    public init?(_ value: JSONValue) {
        guard let code = value["code"]?.numberValue?.intValue,
            let message = value["message"]?.stringValue
        else { return nil }
        self.init(code: code, message: message, data: value["data"])
    }

    /// `code: message`.
    public var description: String {
        "\(self.code): \(self.message)"
    }

    private static func standard(
        _ code: Int,
        _ message: String,
        _ status: GRPCStatusCode,
        extra: JSONObject = [:]
    ) -> RPCError {
        var data: JSONObject = ["status": .string(status.name)]
        for member in extra {
            data[member.key] = member.value
        }
        return RPCError(code: code, message: message, data: .object(data))
    }
}

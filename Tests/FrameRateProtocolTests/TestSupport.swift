import FrameRateProtocol
import NIOCore

/// Parses with the default parser, for tests.
func parse(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
    try JSONParser(maximumDepth: maximumDepth).parse(text)
}

/// The error thrown when parsing `bytes`, or `nil` if they parse.
func parseError(_ bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try JSONParser(maximumDepth: maximumDepth).parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// The error thrown when parsing `text`, or `nil` if it parses.
func parseError(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSONParseError? {
    parseError(Array(text.utf8), maximumDepth: maximumDepth)
}

/// The reply text the server sends for `line`, or `nil` when it sends nothing.
func replyText(
    _ line: String,
    configuration: JSONRPCInbound.Configuration = .init(),
    handler: (String, JSONValue?) -> Result<JSONValue, RPCError> = SpecHandler.handle
) -> String? {
    JSONRPCInbound.parse(line: line, configuration: configuration).reply(handler: handler).map { String(buffer: $0) }
}

/// The methods used by the examples in the JSON-RPC 2.0 specification.
enum SpecHandler {
    static func handle(_ method: String, _ params: JSONValue?) -> Result<JSONValue, RPCError> {
        switch method {
        case "subtract":
            let minuend = params?[0] ?? params?["minuend"]
            let subtrahend = params?[1] ?? params?["subtrahend"]
            guard let minuend = minuend?.int64Value else {
                return .failure(.invalidParams(field: "minuend", "minuend must be an integer"))
            }
            guard let subtrahend = subtrahend?.int64Value else {
                return .failure(.invalidParams(field: "subtrahend", "subtrahend must be an integer"))
            }
            return .success(.number(JSONNumber(minuend - subtrahend)))
        case "sum", "notify_sum":
            let total = (params?.arrayValue ?? []).compactMap(\.int64Value).reduce(0, +)
            return .success(.number(JSONNumber(total)))
        case "update", "notify_hello":
            return .success(.null)
        case "get_data":
            return .success(["hello", 5])
        default:
            return .failure(.methodNotFound(method))
        }
    }
}

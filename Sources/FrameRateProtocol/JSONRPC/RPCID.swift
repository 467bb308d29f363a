/// A JSON-RPC 2.0 request id: a number (kept as its exact text) or a string.
///
/// A JSON `null` id is modelled as `RPCID?.none` wherever it may occur: in error responses
/// whose request id could not be determined, and in replies to the (discouraged but legal)
/// requests that carry `"id": null`.
public enum RPCID: Sendable, Hashable, CustomStringConvertible {
    /// A numeric id, echoed with its exact source text (`1.50` stays `1.50`).
    case number(JSONNumber)
    /// A string id.
    case string(String)

    /// The id as JSON.
    public var jsonValue: JSONValue {
        switch self {
        case .number(let number): .number(number)
        case .string(let string): .string(string)
        }
    }

    /// The id as it appears in JSON, e.g. `7` or `"abc"`.
    public var description: String {
        self.jsonValue.jsonString
    }

    /// The id held by `value` if it is a number or a string, else `nil`.
    public init?(_ value: JSONValue) {
        switch value {
        case .number(let number): self = .number(number)
        case .string(let string): self = .string(string)
        default: return nil
        }
    }
}

extension RPCID: ExpressibleByIntegerLiteral {
    /// Creates a numeric id.
    public init(integerLiteral value: Int) {
        self = .number(JSONNumber(value))
    }
}

extension RPCID: ExpressibleByStringLiteral {
    /// Creates a string id.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension Optional where Wrapped == RPCID {
    /// The id as JSON, `null` when absent.
    var jsonValue: JSONValue {
        self?.jsonValue ?? .null
    }
}

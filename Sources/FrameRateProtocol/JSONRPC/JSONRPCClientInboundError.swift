/// Why a line from the daemon is not valid JSON-RPC 2.0.
public struct JSONRPCClientInboundError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The JSON error, when the line was not valid JSON at all.
    public var parseError: JSONParseError?

    /// Creates an error.
    public init(_ message: String, parseError: JSONParseError? = nil) {
        self.message = message
        self.parseError = parseError
    }

    /// The ``message``.
    public var description: String {
        self.message
    }
}

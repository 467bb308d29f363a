public import NIOCore

/// One line a client received from the daemon: a single message or a batch of responses.
public enum JSONRPCClientInbound: Sendable, Hashable {
    /// One response or notification.
    case single(JSONRPCClientMessage)
    /// The non-empty array answering a batch request.
    case batch([JSONRPCClientMessage])

    /// All messages on the line, in order.
    public var messages: [JSONRPCClientMessage] {
        switch self {
        case .single(let message): [message]
        case .batch(let messages): messages
        }
    }

    /// Parses and classifies one line (without its newline); any malformed message makes the
    /// whole line an error (see ``JSONRPCClientMessage/init(_:)``).
    public static func parse(
        line: ByteBuffer,
        maximumDepth: Int = JSONParser.defaultMaximumDepth
    ) throws(JSONRPCClientInboundError) -> JSONRPCClientInbound {
        try classify(Result { () throws(JSONParseError) in try JSONParser(maximumDepth: maximumDepth).parse(line) })
    }

    /// Parses and classifies one line (without its newline) given as bytes.
    public static func parse(
        line: some Collection<UInt8>,
        maximumDepth: Int = JSONParser.defaultMaximumDepth
    ) throws(JSONRPCClientInboundError) -> JSONRPCClientInbound {
        try classify(Result { () throws(JSONParseError) in try JSONParser(maximumDepth: maximumDepth).parse(line) })
    }

    /// Parses and classifies one line (without its newline) given as text.
    public static func parse(
        line: String,
        maximumDepth: Int = JSONParser.defaultMaximumDepth
    ) throws(JSONRPCClientInboundError) -> JSONRPCClientInbound {
        try classify(Result { () throws(JSONParseError) in try JSONParser(maximumDepth: maximumDepth).parse(line) })
    }

    /// Classifies an already parsed JSON value.
    public static func classify(_ value: JSONValue) throws(JSONRPCClientInboundError) -> JSONRPCClientInbound {
        guard case .array(let elements) = value else {
            return .single(try JSONRPCClientMessage(value))
        }
        guard !elements.isEmpty else {
            throw JSONRPCClientInboundError("an empty batch is not a valid reply")
        }
        var messages: [JSONRPCClientMessage] = []
        messages.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(JSONRPCClientInboundError) {
                messages.append(try JSONRPCClientMessage(element))
            } catch {
                throw JSONRPCClientInboundError("batch element \(index): \(error.message)")
            }
        }
        return .batch(messages)
    }

    private static func classify(
        _ parsed: Result<JSONValue, JSONParseError>
    ) throws(JSONRPCClientInboundError) -> JSONRPCClientInbound {
        switch parsed {
        case .success(let value):
            return try classify(value)
        case .failure(let error):
            throw JSONRPCClientInboundError("invalid JSON: \(error.message)", parseError: error)
        }
    }
}

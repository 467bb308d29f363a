public import NIOCore

/// One line received by the server, classified: a single message or a batch.
///
/// Obtain it with `parse(line:configuration:)` and answer it with
/// ``reply(allocator:handler:)``, which applies all the batch rules.
public enum JSONRPCInbound: Sendable, Hashable {
    /// One message. Unparseable JSON becomes `.single(.invalid(id: nil, error: .parseError))`;
    /// a top-level value that is neither an object nor a non-empty array, including the empty
    /// batch `[]`, becomes `.single(.invalid(id: nil, error: .invalidRequest))`.
    case single(JSONRPCInboundMessage)
    /// A non-empty batch, each element classified on its own (so `[1,2,3]` is three invalid
    /// requests). Batches are not nested: an array inside a batch is an invalid request.
    case batch([JSONRPCInboundMessage])
    /// A batch with more than ``Configuration/maximumBatchSize`` elements; none of them is
    /// classified or executed. ``reply(allocator:handler:)`` answers it with one
    /// ``RPCError/batchTooLarge(count:limit:)`` (gRPC `RESOURCE_EXHAUSTED`, code 8) with id `null`.
    case batchTooLarge(count: Int, limit: Int)

    /// Limits applied while parsing a line.
    public struct Configuration: Sendable, Hashable {
        /// The default ``maximumBatchSize``: 128 messages.
        public static let defaultMaximumBatchSize = 128

        /// The largest batch that is executed.
        public var maximumBatchSize: Int
        /// The JSON nesting limit (see ``JSONParser/maximumDepth``); deeper input is a
        /// parse error (-32700).
        public var maximumDepth: Int

        /// Creates a configuration.
        public init(
            maximumBatchSize: Int = Configuration.defaultMaximumBatchSize,
            maximumDepth: Int = JSONParser.defaultMaximumDepth
        ) {
            precondition(maximumBatchSize >= 1, "maximumBatchSize must be positive")
            self.maximumBatchSize = maximumBatchSize
            self.maximumDepth = maximumDepth
        }
    }

    /// Parses and classifies one line (without its newline). Never fails: every problem is
    /// represented as a message that is answered with an error.
    public static func parse(line: ByteBuffer, configuration: Configuration = Configuration()) -> JSONRPCInbound {
        let parser = JSONParser(maximumDepth: configuration.maximumDepth)
        return Self.parsed(Result { () throws(JSONParseError) in try parser.parse(line) }, configuration)
    }

    /// Parses and classifies one line (without its newline) given as bytes.
    public static func parse(line: some Collection<UInt8>, configuration: Configuration = Configuration()) -> JSONRPCInbound {
        let parser = JSONParser(maximumDepth: configuration.maximumDepth)
        return Self.parsed(Result { () throws(JSONParseError) in try parser.parse(line) }, configuration)
    }

    /// Parses and classifies one line (without its newline) given as text.
    public static func parse(line: String, configuration: Configuration = Configuration()) -> JSONRPCInbound {
        let parser = JSONParser(maximumDepth: configuration.maximumDepth)
        return Self.parsed(Result { () throws(JSONParseError) in try parser.parse(line) }, configuration)
    }

    /// Classifies an already parsed JSON value.
    public static func classify(_ value: JSONValue, configuration: Configuration = Configuration()) -> JSONRPCInbound {
        guard case .array(let elements) = value else {
            return .single(JSONRPCInboundMessage.classify(value))
        }
        guard !elements.isEmpty else {
            return .single(.invalid(id: nil, error: .invalidRequest(detail: "a batch must not be empty")))
        }
        guard elements.count <= configuration.maximumBatchSize else {
            return .batchTooLarge(count: elements.count, limit: configuration.maximumBatchSize)
        }
        return .batch(elements.map(JSONRPCInboundMessage.classify))
    }

    private static func parsed(_ result: Result<JSONValue, JSONParseError>, _ configuration: Configuration) -> JSONRPCInbound {
        switch result {
        case .success(let value):
            return classify(value, configuration: configuration)
        case .failure(let error):
            return .single(.invalid(id: nil, error: .parseError(detail: error.message)))
        }
    }
}

public import NIOCore

/// A strict RFC 8259 JSON parser working directly on bytes.
///
/// It validates UTF-8 everywhere (including inside strings), accepts only the exact JSON
/// grammar (no comments, `NaN`, `Infinity`, leading zeros, `+1`, `.5`, `1.`, single quotes or
/// trailing commas), allows whitespace around the value and nothing else after it. Nesting is
/// bounded by ``maximumDepth`` and the parser is iterative, so no input can make it recurse or
/// crash. Duplicate object keys are kept (see ``JSONObject``).
public struct JSONParser: Sendable {
    /// The default for ``maximumDepth``: 64 levels.
    public static let defaultMaximumDepth = 64

    /// How many arrays/objects may be nested inside each other; a scalar at the top level
    /// is depth 0 and `[[1]]` is depth 2. Deeper input fails with ``JSONParseError/Kind/nestingTooDeep``.
    public var maximumDepth: Int

    /// Creates a parser.
    /// - Parameter maximumDepth: the nesting limit; must not be negative.
    public init(maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        precondition(maximumDepth >= 0, "maximumDepth must not be negative")
        self.maximumDepth = maximumDepth
    }

    /// Parses one JSON document from a collection of bytes.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let outcome = bytes.withContiguousStorageIfAvailable { buffer in
            self.parseResult(UnsafeRawBufferPointer(buffer))
        }
        if let outcome {
            return try outcome.get()
        }
        return try Array(bytes).withUnsafeBytes { self.parseResult($0) }.get()
    }

    /// Parses one JSON document from the readable bytes of `buffer` (which is not modified).
    public func parse(_ buffer: ByteBuffer) throws(JSONParseError) -> JSONValue {
        try buffer.withUnsafeReadableBytes { self.parseResult($0) }.get()
    }

    /// Parses one JSON document from the UTF-8 of `text`.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { self.parseResult(UnsafeRawBufferPointer($0)) }.get()
    }

    private func parseResult(_ bytes: UnsafeRawBufferPointer) -> Result<JSONValue, JSONParseError> {
        var engine = JSONByteParser(bytes: bytes, maximumDepth: self.maximumDepth)
        do throws(JSONParseError) {
            return .success(try engine.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

extension JSONValue {
    /// Parses a JSON document with the default ``JSONParser``.
    public init(parsing text: String) throws(JSONParseError) {
        self = try JSONParser().parse(text)
    }

    /// Parses a JSON document with the default ``JSONParser``.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        self = try JSONParser().parse(bytes)
    }
}

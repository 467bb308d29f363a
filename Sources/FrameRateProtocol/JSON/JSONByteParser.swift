/// The parsing engine behind ``JSONParser``: one pass over a borrowed byte buffer.
///
/// Containers are tracked on an explicit stack (never by recursion), so the only limit on
/// nesting is ``maximumDepth``. Every read goes through `peek()` or is preceded by an explicit
/// `position < bytes.count` check: the buffer is unsafe, so this discipline is what keeps
/// arbitrary input from reading out of bounds.
struct JSONByteParser {
    /// An array or object that is still open.
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONObject.Member] = []
        /// For objects: the key whose value is being parsed.
        var pendingKey = ""
    }

    let bytes: UnsafeRawBufferPointer
    var position = 0
    let maximumDepth: Int
    /// Reused buffer for decoding strings that contain escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses the whole input as exactly one JSON value surrounded by optional whitespace.
    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        var stack: [Frame] = []
        valueLoop: while true {
            self.skipWhitespace()
            guard let byte = self.peek() else {
                throw self.endOfInput(expecting: "a JSON value")
            }
            var value: JSONValue
            switch byte {
            case ASCII.openBracket, ASCII.openBrace:
                guard stack.count < self.maximumDepth else {
                    throw JSONParseError(
                        kind: .nestingTooDeep,
                        offset: self.position,
                        message: "nesting deeper than \(self.maximumDepth) levels at byte \(self.position)"
                    )
                }
                let isObject = byte == ASCII.openBrace
                self.position += 1
                self.skipWhitespace()
                if self.peek() == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    self.position += 1
                    value = isObject ? .object(JSONObject()) : .array([])
                } else {
                    var frame = Frame(isObject: isObject)
                    if isObject {
                        frame.pendingKey = try self.parseMemberKey()
                    }
                    stack.append(frame)
                    continue valueLoop
                }
            default:
                value = try self.parseScalar(startingWith: byte)
            }

            // Attach the finished value to the innermost open container; close containers
            // for as long as their closing bracket follows.
            while !stack.isEmpty {
                let top = stack.count - 1
                if stack[top].isObject {
                    stack[top].members.append(JSONObject.Member(key: stack[top].pendingKey, value: value))
                } else {
                    stack[top].elements.append(value)
                }
                self.skipWhitespace()
                let closing = stack[top].isObject ? ASCII.closeBrace : ASCII.closeBracket
                switch self.peek() {
                case ASCII.comma?:
                    self.position += 1
                    if stack[top].isObject {
                        self.skipWhitespace()
                        stack[top].pendingKey = try self.parseMemberKey()
                    }
                    continue valueLoop
                case closing?:
                    self.position += 1
                    let frame = stack.removeLast()
                    value = frame.isObject ? .object(JSONObject(frame.members)) : .array(frame.elements)
                case nil:
                    throw self.endOfInput(expecting: "',' or '\(Character(Unicode.Scalar(closing)))'")
                case let other?:
                    throw self.unexpected(
                        other,
                        expecting: "',' or '\(Character(Unicode.Scalar(closing)))'"
                    )
                }
            }

            self.skipWhitespace()
            if let trailing = self.peek() {
                var error = self.unexpected(trailing, expecting: "nothing after the JSON value")
                if error.kind == .unexpectedCharacter { error.kind = .trailingCharacters }
                throw error
            }
            return value
        }
    }

    // MARK: - Scalars

    private mutating func parseScalar(startingWith byte: UInt8) throws(JSONParseError) -> JSONValue {
        switch byte {
        case ASCII.quote:
            return .string(try self.parseString())
        case ASCII.lowerT:
            try self.expectLiteral("true")
            return .bool(true)
        case ASCII.lowerF:
            try self.expectLiteral("false")
            return .bool(false)
        case ASCII.lowerN:
            try self.expectLiteral("null")
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine:
            return .number(try self.parseNumber())
        default:
            throw self.unexpected(byte, expecting: "a JSON value")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = self.position
        for index in 0..<literal.utf8CodeUnitCount {
            let expected = literal.utf8Start[index]
            guard let actual = self.peek() else {
                throw self.endOfInput(expecting: "'\(literal)'")
            }
            guard actual == expected else {
                if index == 0 {
                    throw self.unexpected(actual, expecting: "'\(literal)'")
                }
                throw self.unexpected(actual, expecting: "'\(literal)' (started at byte \(start))")
            }
            self.position += 1
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = self.position
        if self.peek() == ASCII.minus {
            self.position += 1
            if self.peek() == ASCII.upperI, self.hasPrefix("Infinity") {
                throw JSONParseError(
                    kind: .nonFiniteNumber,
                    offset: start,
                    message: "-Infinity is not valid JSON; use null (at byte \(start))"
                )
            }
        }
        switch self.peek() {
        case ASCII.zero?:
            self.position += 1
            if let next = self.peek(), ASCII.isDigit(next) {
                throw JSONParseError(
                    kind: .invalidNumber,
                    offset: start,
                    message: "leading zeros are not allowed in numbers (at byte \(start))"
                )
            }
        case let digit? where ASCII.isDigit(digit):
            self.skipDigits()
        case nil:
            throw self.endOfInput(expecting: "a digit")
        case let other?:
            throw self.invalidNumber(other, expecting: "a digit after '-'")
        }
        if self.peek() == ASCII.period {
            self.position += 1
            try self.requireDigit(after: "the decimal point")
        }
        if let byte = self.peek(), byte == ASCII.lowerE || byte == ASCII.upperE {
            self.position += 1
            if let sign = self.peek(), sign == ASCII.plus || sign == ASCII.minus {
                self.position += 1
            }
            try self.requireDigit(after: "the exponent marker")
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.position]), as: UTF8.self)
        return JSONNumber(uncheckedText: text)
    }

    private mutating func requireDigit(after what: String) throws(JSONParseError) {
        guard let byte = self.peek() else {
            throw self.endOfInput(expecting: "a digit after \(what)")
        }
        guard ASCII.isDigit(byte) else {
            throw self.invalidNumber(byte, expecting: "a digit after \(what)")
        }
        self.skipDigits()
    }

    private mutating func skipDigits() {
        while let byte = self.peek(), ASCII.isDigit(byte) {
            self.position += 1
        }
    }

    // MARK: - Helpers

    func peek() -> UInt8? {
        self.position < self.bytes.count ? self.bytes[self.position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = self.peek(), ASCII.isWhitespace(byte) {
            self.position += 1
        }
    }

    private func hasPrefix(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard self.bytes.count - self.position >= count else { return false }
        for index in 0..<count where self.bytes[self.position + index] != literal.utf8Start[index] {
            return false
        }
        return true
    }

    func endOfInput(expecting expected: String) -> JSONParseError {
        JSONParseError(
            kind: .unexpectedEndOfInput,
            offset: self.position,
            message: "unexpected end of input at byte \(self.position); expected \(expected)"
        )
    }

    private func invalidNumber(_ byte: UInt8, expecting expected: String) -> JSONParseError {
        var error = self.unexpected(byte, expecting: expected)
        if error.kind == .unexpectedCharacter { error.kind = .invalidNumber }
        return error
    }

    /// The error for `byte` found at the current position, with a specific explanation for
    /// the usual mistakes (NaN, Infinity, comments, `+1`, `.5`, single quotes, bad UTF-8).
    func unexpected(_ byte: UInt8, expecting expected: String) -> JSONParseError {
        let offset = self.position
        func error(_ kind: JSONParseError.Kind, _ message: String) -> JSONParseError {
            JSONParseError(kind: kind, offset: offset, message: message)
        }
        switch byte {
        case ASCII.upperN where self.hasPrefix("NaN"):
            return error(.nonFiniteNumber, "NaN is not valid JSON; use null (at byte \(offset))")
        case ASCII.upperI where self.hasPrefix("Infinity"):
            return error(.nonFiniteNumber, "Infinity is not valid JSON; use null (at byte \(offset))")
        case ASCII.slash:
            return error(.unexpectedCharacter, "unexpected character '/' at byte \(offset); comments are not allowed in JSON")
        case ASCII.plus:
            return error(.invalidNumber, "unexpected character '+' at byte \(offset); numbers must not start with '+'")
        case ASCII.period where expected == "a JSON value":
            return error(.invalidNumber, "unexpected character '.' at byte \(offset); numbers must start with a digit")
        case ASCII.apostrophe:
            return error(.unexpectedCharacter, "unexpected character ''' at byte \(offset); strings must use double quotes")
        case 0x80...:
            guard let end = UTF8Validation.sequenceEnd(in: self.bytes, at: offset) else {
                return error(.invalidUTF8, "invalid UTF-8 at byte \(offset)")
            }
            let scalarText = String(decoding: UnsafeRawBufferPointer(rebasing: self.bytes[offset..<end]), as: UTF8.self)
            let shown = scalarText.unicodeScalars.first.map(ASCII.describe) ?? "U+FFFD"
            return error(.unexpectedCharacter, "unexpected character \(shown) at byte \(offset); expected \(expected)")
        default:
            return error(.unexpectedCharacter, "unexpected character \(ASCII.describe(byte)) at byte \(offset); expected \(expected)")
        }
    }
}

/// Why a byte sequence is not valid JSON, and where.
///
/// ``message`` is a complete human-readable sentence such as
/// `unexpected character 'x' at byte 17` or `NaN is not valid JSON; use null (at byte 0)`.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad class of a ``JSONParseError``.
    public enum Kind: Sendable, Hashable {
        /// A byte that cannot start or continue the value at that point (including comments).
        case unexpectedCharacter
        /// The input ended in the middle of a value (or contained no value at all).
        case unexpectedEndOfInput
        /// The bytes are not well-formed UTF-8 (invalid byte, overlong form, encoded surrogate,
        /// out-of-range code point or truncated sequence).
        case invalidUTF8
        /// Arrays and objects are nested deeper than the parser's maximum depth.
        case nestingTooDeep
        /// `NaN`, `Infinity` or `-Infinity`, which JSON does not have.
        case nonFiniteNumber
        /// A malformed number: leading zeros, `+1`, `.5`, `1.`, `1e`, ...
        case invalidNumber
        /// An unescaped control character (U+0000 to U+001F) inside a string.
        case controlCharacterInString
        /// An unknown escape, a malformed `\u` escape, or a lone surrogate escape.
        case invalidEscape
        /// Non-whitespace bytes after the complete top-level value.
        case trailingCharacters
    }

    /// The broad class of error.
    public var kind: Kind
    /// The zero-based byte offset in the input where the problem was detected.
    public var offset: Int
    /// A human-readable description, including the byte offset.
    public var message: String

    /// Creates an error.
    public init(kind: Kind, offset: Int, message: String) {
        self.kind = kind
        self.offset = offset
        self.message = message
    }

    /// The ``message``.
    public var description: String {
        self.message
    }
}

/// Makes an untrusted value safe to put in one log line: it cannot start a new line, move
/// the cursor, recolour a terminal or reorder the text around it, and it cannot be long.
///
/// - `\n`, `\r`, `\t` and `\` are written `\n`, `\r`, `\t`, `\\`;
/// - every other invisible character (``InvisibleCharacter``: NUL, ESC and the rest of C0,
///   DEL, C1, U+2028/U+2029, bidirectional overrides, zero-width characters, …) is written
///   `\u{XXXX}`;
/// - a value longer than ``limit`` characters keeps its first ``limit`` (counted after
///   escaping) followed by `…(N bytes)`, N being the value's full UTF-8 length.
///
/// So a label `"x\n2026-01-01T00:00:00+0000 critical framerated: …"` is logged as
/// `x\n2026-01-01T00:00:00+0000 critical framerated: …` on the line it belongs to, and a
/// 1 MiB method name costs about 200 bytes of log. The work is bounded by ``limit``.
public struct LogSanitizer: Sendable, Hashable {
    /// The default ``limit``: 200 characters.
    public static let defaultLimit = 200

    /// The most characters (Unicode scalars, after escaping) kept of one value.
    public let limit: Int

    /// A sanitizer keeping at most `limit` characters of a value (`limit >= 1`).
    public init(limit: Int = LogSanitizer.defaultLimit) {
        precondition(limit >= 1, "limit must be positive")
        self.limit = limit
    }

    /// `value` escaped and shortened.
    public func sanitize(_ value: String) -> String {
        var result = ""
        var count = 0
        for scalar in value.unicodeScalars {
            if count >= limit { return result + "…(\(value.utf8.count) bytes)" }
            let escaped = Self.escape(scalar)
            if let escaped {
                result += escaped
                count += escaped.unicodeScalars.count
            } else {
                result.unicodeScalars.append(scalar)
                count += 1
            }
        }
        return result
    }

    /// The escape sequence for `scalar`, or `nil` when it is written as it is.
    static func escape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\\": return "\\\\"
        default:
            guard InvisibleCharacter.isInvisible(scalar) else { return nil }
            return "\\u{" + InvisibleCharacter.hex(scalar.value, minimumDigits: 1) + "}"
        }
    }
}

/// Untrusted values as an error message quotes them: exactly as sent, but short, and with
/// every invisible character named instead of printed.
///
/// - `maximum 1000.0001` is quoted `1000.0001` (its JSON text), never a rounded `1000.0`;
/// - a value longer than ``limit`` characters keeps its first ``limit`` and says how long it
///   was: `12345678901234567890123456789012… (100000 digits)`;
/// - an invisible character (``InvisibleCharacter``) becomes its name in angle brackets:
///   `"\u{FEFF}60"` is quoted `<U+FEFF BYTE ORDER MARK>60`.
///
/// The cost is bounded by ``limit``, however long the value.
public enum EchoedValue {
    /// The most characters (Unicode scalars) of a value an error message quotes: 32.
    public static let limit = 32
    /// The most characters of a name a client chose (a method, a field) an error quotes: 128,
    /// room for every real method name (`framerate.v1.DisplayLink/Register` has 33).
    public static let nameLimit = 128

    /// A string value, shortened and with invisible characters named.
    public static func text(_ value: String, limit: Int = EchoedValue.limit) -> String {
        var quoted = ""
        var count = 0
        for scalar in value.unicodeScalars {
            if count == limit { return quoted + "… (\(value.utf8.count) bytes)" }
            if InvisibleCharacter.isInvisible(scalar) {
                quoted += "<" + InvisibleCharacter.name(of: scalar) + ">"
            } else {
                quoted.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return quoted
    }

    /// A number's JSON text, shortened: `… (N digits)` for a plain integer, else
    /// `… (N characters)`. JSON number text holds no invisible characters.
    public static func number(_ text: String, limit: Int = EchoedValue.limit) -> String {
        let length = text.utf8.count
        guard length > limit else { return text }
        let isInteger = text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        let digits = isInteger ? text.utf8.count - (text.hasPrefix("-") ? 1 : 0) : length
        return String(text.prefix(limit)) + "… (\(digits) \(isInteger ? "digits" : "characters"))"
    }
}

import UntrustedText

/// Byte constants and classifiers shared by the JSON parser and serializer.
enum ASCII {
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let plus = UInt8(ascii: "+")
    static let comma = UInt8(ascii: ",")
    static let minus = UInt8(ascii: "-")
    static let period = UInt8(ascii: ".")
    static let slash = UInt8(ascii: "/")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let colon = UInt8(ascii: ":")
    static let upperE = UInt8(ascii: "E")
    static let upperI = UInt8(ascii: "I")
    static let upperN = UInt8(ascii: "N")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let lowerE = UInt8(ascii: "e")
    static let lowerF = UInt8(ascii: "f")
    static let lowerN = UInt8(ascii: "n")
    static let lowerT = UInt8(ascii: "t")
    static let lowerU = UInt8(ascii: "u")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")

    /// JSON's four whitespace bytes: space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab || byte == newline || byte == carriageReturn
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= zero && byte <= nine
    }

    /// The value of a hexadecimal digit, either case.
    static func hexValue(_ byte: UInt8) -> UInt16? {
        switch byte {
        case zero...nine: UInt16(byte - zero)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt16(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt16(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Lower-case hexadecimal digits, for `\u00XX` escapes.
    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `'x'` for printable ASCII, `U+000A` otherwise; for error messages.
    static func describe(_ byte: UInt8) -> String {
        describe(Unicode.Scalar(byte))
    }

    /// A character as an error message shows it: `'x'` when visible, else its code point and
    /// name (`U+FEFF BYTE ORDER MARK`, `U+0000 NULL`, `U+0020 SPACE`), never the raw character.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        if scalar != " " && !InvisibleCharacter.isInvisible(scalar) {
            return "'\(Character(scalar))'"
        }
        return InvisibleCharacter.name(of: scalar)
    }
}

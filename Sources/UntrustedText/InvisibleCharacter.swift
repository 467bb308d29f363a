/// Which Unicode scalars cannot be shown as they are, and what to call them.
///
/// "Invisible" means a reader cannot see the character, or it changes how the text
/// around it is displayed: control characters (C0, DEL, C1), line and paragraph
/// separators, every space other than U+0020, format characters (zero-width joiners,
/// bidirectional overrides, the byte order mark), variation selectors and other
/// default-ignorable code points, and private-use, surrogate or unassigned code points.
///
/// Both ways framerated shows untrusted text use this one rule:
/// ``EchoedValue`` (error messages sent to clients) and ``LogSanitizer`` (log lines).
public enum InvisibleCharacter {
    /// Whether `scalar` is invisible or display-changing (see the type's rule).
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x21 && scalar.value <= 0x7E { return false }  // printable ASCII: the common case
        if scalar == " " { return false }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator,
             .privateUse, .surrogate, .unassigned:
            return true
        default:
            return properties.isDefaultIgnorableCodePoint || properties.isVariationSelector
        }
    }

    /// `U+XXXX NAME`, e.g. `U+FEFF BYTE ORDER MARK`, `U+00A0 NO-BREAK SPACE`, `U+000A LINE FEED`,
    /// or just `U+XXXX` for a code point without a name.
    public static func name(of scalar: Unicode.Scalar) -> String {
        let code = "U+" + hex(scalar.value, minimumDigits: 4)
        guard let name = commonNames[scalar.value] ?? scalar.properties.nameAlias ?? scalar.properties.name else {
            return code
        }
        return code + " " + name
    }

    /// `value` in upper-case hexadecimal, zero-padded to `minimumDigits`.
    static func hex(_ value: UInt32, minimumDigits: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, minimumDigits - digits.count)) + digits
    }

    /// Names for code points Unicode leaves unnamed (controls) or whose formal name hides
    /// what users know them as (U+FEFF is formally ZERO WIDTH NO-BREAK SPACE).
    private static let commonNames: [UInt32: String] = [
        0x00: "NULL", 0x01: "START OF HEADING", 0x02: "START OF TEXT", 0x03: "END OF TEXT",
        0x04: "END OF TRANSMISSION", 0x05: "ENQUIRY", 0x06: "ACKNOWLEDGE", 0x07: "BELL",
        0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION", 0x0A: "LINE FEED", 0x0B: "LINE TABULATION",
        0x0C: "FORM FEED", 0x0D: "CARRIAGE RETURN", 0x0E: "SHIFT OUT", 0x0F: "SHIFT IN",
        0x10: "DATA LINK ESCAPE", 0x11: "DEVICE CONTROL ONE", 0x12: "DEVICE CONTROL TWO",
        0x13: "DEVICE CONTROL THREE", 0x14: "DEVICE CONTROL FOUR", 0x15: "NEGATIVE ACKNOWLEDGE",
        0x16: "SYNCHRONOUS IDLE", 0x17: "END OF TRANSMISSION BLOCK", 0x18: "CANCEL", 0x19: "END OF MEDIUM",
        0x1A: "SUBSTITUTE", 0x1B: "ESCAPE", 0x1C: "FILE SEPARATOR", 0x1D: "GROUP SEPARATOR",
        0x1E: "RECORD SEPARATOR", 0x1F: "UNIT SEPARATOR", 0x7F: "DELETE", 0x85: "NEXT LINE",
        0xFEFF: "BYTE ORDER MARK",
    ]
}

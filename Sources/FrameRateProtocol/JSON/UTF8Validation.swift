/// Strict UTF-8 well-formedness checks (RFC 3629, Unicode Table 3-7).
///
/// Rejects continuation bytes without a lead, `C0`/`C1` and `F5`...`FF`, overlong forms,
/// UTF-8-encoded surrogates (`ED A0`...`ED BF`), code points above U+10FFFF and sequences
/// truncated by the end of the input.
enum UTF8Validation {
    /// If `bytes[index]` starts a well-formed multi-byte sequence (the lead byte must be
    /// `0x80` or above), the index just past it; otherwise `nil`.
    static func sequenceEnd(in bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        guard index < bytes.count else { return nil }
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF:
            length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF:
            length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3:
            length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F
        default:
            return nil
        }
        guard bytes.count - index >= length, secondRange.contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            return nil
        }
        return index + length
    }
}

/// Unsigned integers written as ASCII decimal digits straight into memory, two digits at a
/// time: the tick encoder's link, sequence and skip count, and the wire's times
/// (``WireTime/write(nanoseconds:into:)``), on the 120 Hz hot path.
///
/// Each pair of digits costs one division by 100 (a multiplication) and one two-byte store
/// from a table of `"00"` to `"99"`, where a digit at a time cost a division and a store
/// per digit. The values are a few digits each, so the digits are counted a pair at a time
/// rather than against a table of powers of ten.
enum DecimalText {
    /// Writes `value` in decimal to `out` at `at` (room for 20 digits is the caller's);
    /// returns the offset after it.
    @inline(__always)
    static func write(_ value: UInt64, to out: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 100 {
            rest /= 100
            digits &+= 2
        }
        if rest >= 10 { digits &+= 1 }
        let base = out.baseAddress!.advanced(by: at)
        var end = digits
        var remaining = value
        while remaining >= 100 {
            end &-= 2
            storePair(remaining % 100, to: base, at: end)
            remaining /= 100
        }
        if remaining >= 10 {
            storePair(remaining, to: base, at: 0)
        } else {
            storeDigit(remaining, to: base, at: 0)
        }
        return at &+ digits
    }

    /// Writes `value` (below 10^9) as exactly nine digits, zero-padded, at `base + at`.
    @inline(__always)
    static func writeNineDigits(_ value: UInt64, to base: UnsafeMutableRawPointer, at: Int) {
        var remaining = value
        for pair in (0..<4).reversed() {
            storePair(remaining % 100, to: base, at: at &+ 1 &+ 2 &* pair)
            remaining /= 100
        }
        storeDigit(remaining, to: base, at: at)
    }

    /// Stores the two digits of `pair` (below 100) at `base + offset`.
    @inline(__always)
    private static func storePair(_ pair: UInt64, to base: UnsafeMutableRawPointer, at offset: Int) {
        let digits = UnsafeRawPointer(pairs.utf8Start).loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: pair) &* 2, as: UInt16.self)
        base.storeBytes(of: digits, toByteOffset: offset, as: UInt16.self)
    }

    /// Stores the digit `digit` (below 10) at `base + offset`.
    @inline(__always)
    private static func storeDigit(_ digit: UInt64, to base: UnsafeMutableRawPointer, at offset: Int) {
        base.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit), toByteOffset: offset, as: UInt8.self)
    }

    /// "00" to "99", two bytes each: the pair `n` at offset `2n`.
    private static let pairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
}

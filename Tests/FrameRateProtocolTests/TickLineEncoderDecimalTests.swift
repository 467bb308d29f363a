import Testing

@testable import FrameRateProtocol

/// `TickLineEncoder.writeDecimal`, which writes a tick's link, sequence and skip count two
/// digits at a time, against Swift's own `String(_:)`: every value below 100,000 (every
/// digit count's first pairs and the odd-length ends), each power of ten and its
/// neighbours up to `UInt64.max`, and random values of every bit width.
@Suite struct TickLineEncoderDecimalTests {
    /// `value` as `writeDecimal` writes it, after a marker byte and before room it must not
    /// touch: the offset it returns must end the digits exactly.
    static func written(_ value: UInt64) -> (text: String, untouched: Bool) {
        var bytes = [UInt8](repeating: UInt8(ascii: "#"), count: 1 + 20 + 4)
        let end = bytes.withUnsafeMutableBytes { TickLineEncoder.writeDecimal(value, to: $0, at: 1) }
        let untouched = bytes[0] == UInt8(ascii: "#") && bytes[end...].allSatisfy { $0 == UInt8(ascii: "#") }
        return (String(decoding: bytes[1..<end], as: UTF8.self), untouched)
    }

    static func check(_ value: UInt64) {
        let (text, untouched) = written(value)
        #expect(text == String(value), "\(value)")
        #expect(untouched, "\(value) wrote outside its digits")
    }

    @Test("every value below 100,000")
    func small() {
        for value in 0..<UInt64(100_000) { Self.check(value) }
    }

    @Test("each power of ten, one below and one above it, and UInt64.max")
    func powersOfTen() {
        var power: UInt64 = 1
        for _ in 0...19 {
            for value in [power - 1, power, power + 1] { Self.check(value) }
            let (next, overflow) = power.multipliedReportingOverflow(by: 10)
            if overflow { break }
            power = next
        }
        Self.check(UInt64.max)
        Self.check(UInt64.max - 1)
    }

    @Test("random values of every bit width", arguments: [1, 2] as [UInt64])
    func random(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for bits in 1...64 {
            let mask = bits == 64 ? UInt64.max : (UInt64(1) << bits) - 1
            for _ in 0..<200 { Self.check(rng.next() & mask) }
        }
    }
}

import NIOCore
import Testing

@testable import FrameRateProtocol

/// `DecimalText.write`, which writes a tick's link, sequence and skip count two digits at a
/// time, against Swift's own `String(_:)`: every value below 100,000 (every digit count's
/// first pairs and the odd-length ends), each power of ten and its neighbours up to
/// `UInt64.max`, and random values of every bit width.
@Suite struct DecimalTextTests {
    /// `value` as `DecimalText.write` writes it, after a marker byte and before room it must not
    /// touch: the offset it returns must end the digits exactly.
    static func written(_ value: UInt64) -> (text: String, untouched: Bool) {
        var bytes = [UInt8](repeating: UInt8(ascii: "#"), count: 1 + 20 + 4)
        let end = bytes.withUnsafeMutableBytes { DecimalText.write(value, to: $0, at: 1) }
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

/// The shared fields' times and rates, written in place, against the texts they must be:
/// seconds with nine decimals built from `String(_:)`, and `JSONNumber(_:).text`.
@Suite struct TickLineEncoderFieldTests {
    /// `seconds.nnnnnnnnn`, with a minus sign before a negative count, built from Strings:
    /// what `WireTime.format` wrote before it was written in place.
    static func seconds(_ nanoseconds: Int64) -> String {
        let magnitude = nanoseconds.magnitude
        let fraction = String(magnitude % 1_000_000_000)
        return (nanoseconds < 0 ? "-" : "") + "\(magnitude / 1_000_000_000)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }

    static func appended(_ write: (inout ByteBuffer) -> Void) -> String {
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        buffer.writeString("#")
        write(&buffer)
        buffer.writeString("#")
        return String(buffer: buffer)
    }

    @Test("seconds with nine decimals: every digit count of the fraction, whole seconds, the largest and smallest times, negative ones")
    func seconds() {
        var values: [Int64] = [0, 1, 9, 10, 99, 100, 999_999_999, 1_000_000_000, 1_000_000_001, 8_333_333, 1_234_500_000_001, .max]
        var power: Int64 = 1
        while power < 1_000_000_000_000_000_000 {
            values += [power - 1, power, power + 1, power * 7 + 3]
            power *= 10
        }
        var rng = SplitMix64(seed: 9)
        for _ in 0..<2_000 { values.append(Int64(bitPattern: rng.next() >> 1) >> Int64(rng.next() % 63)) }
        // Never on the wire, but written with their sign.
        values += [-1, -1_500_000_000, -999_999_999, .min]
        for value in values {
            #expect(Self.appended { WireTime.write(nanoseconds: value, into: &$0) } == "#\(Self.seconds(value))#", "\(value)")
            #expect(WireTime.format(nanoseconds: value) == Self.seconds(value), "\(value)")
        }
        #expect(WireTime.format(nanoseconds: -1_500_000_000) == "-1.500000000")
        #expect(WireTime.format(nanoseconds: -1) == "-0.000000001")
        #expect(WireTime.format(nanoseconds: .min) == "-9223372036.854775808")
        #expect(WireTime.format(nanoseconds: 8_333_333) == "0.008333333")
    }

    @Test("rates: whole ones up to 1,000,000 Hz in place, the rest as JSONNumber writes them")
    func rates() {
        var rates: [Double] = (1...2_000).map(Double.init) + stride(from: 2_000, through: 1_000_000, by: 997).map(Double.init)
        rates += [1_000_000, 1_000_001, 0, -0.0, 0.5, 17.142857142857142, 47.952, 59.94, 1e16, 2e20, .leastNonzeroMagnitude, -120]
        for rate in rates {
            #expect(Self.appended { TickLineEncoder.writeRate(rate, into: &$0) } == "#\(JSONNumber(rate).text)#", "\(rate)")
        }
    }

    @Test("a vsync id in decimal")
    func vsyncID() {
        for value in [0, 7, 10, 121, 1 << 40, .max] as [UInt64] {
            let shared = TickLineEncoder.sharedFields(
                timestamp: 0, targetTimestamp: 0, duration: 0, refreshRate: 120, callbackRate: 120,
                timelines: [.init(vsyncId: value, deadline: 0, presentationTime: 0)], allocator: ByteBufferAllocator()
            )
            #expect(String(buffer: shared).contains(#"[{"vsyncId":\#(value),"deadline":"#), "\(value)")
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import NIOCore

/// Reads a Tick notification line written by ``TickLineEncoder`` straight from its bytes:
/// the counterpart of the encoder for tools that receive thousands of ticks a second
/// (the `framebench` load generator) and must not be the bottleneck.
///
/// It builds no `JSONValue`, allocates nothing and reads each byte at most once. It
/// accepts exactly the encoder's canonical form:
///
/// ```
/// {"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":L,"sequence":S,
///  "timestamp":T,"targetTimestamp":T,"duration":T,"refreshRate":R,"callbackRate":R,"skipped":K}}
/// ```
///
/// with `,"boosted":true` between `callbackRate` and `skipped` for a boosted link's tick,
/// then `,"targetPresentationTimestamp":T` and, for a link with more than one timeline,
/// `,"timelines":[{"vsyncId":N,"deadline":T,"presentationTime":T},…]` (both optional here)
/// (one line, optionally ending in `\n`), with `L`, `S`, `K` unsigned decimal integers, `T`
/// seconds as `digits[.digits]` (at most nine decimals: the wire's nanosecond precision) and
/// `R` any JSON number. Anything else, including a valid Tick with its members in another
/// order or with whitespace, gives `nil`: a caller that must accept every valid JSON-RPC
/// line falls back to ``JSONRPCClientInbound`` for those.
public enum TickLineScanner {
    /// The fields of one Tick that a receiver needs to account for it.
    public struct Fields: Hashable, Sendable {
        /// The link's id (`params.link`).
        public var link: UInt64
        /// The link's interval number (`params.sequence`).
        public var sequence: UInt64
        /// The vsync that starts the interval (`params.timestamp`), nanoseconds on `CLOCK_MONOTONIC`.
        public var timestampNanoseconds: Int64
        /// Intervals that passed without a tick since the link's previous tick (`params.skipped`).
        public var skipped: UInt64
        /// Whether the link was boosted at this tick (`params.boosted`, absent when not).
        public var boosted: Bool = false

        /// Builds the fields.
        public init(link: UInt64, sequence: UInt64, timestampNanoseconds: Int64, skipped: UInt64) {
            self.link = link
            self.sequence = sequence
            self.timestampNanoseconds = timestampNanoseconds
            self.skipped = skipped
        }
    }

    /// The bytes every Tick line starts with, up to the link's digits.
    static let prefix: StaticString = #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":"#

    /// Whether `line` starts like a Tick line (a cheap test before ``scan(_:)-(UnsafeRawBufferPointer)``;
    /// a line that passes may still be malformed).
    public static func looksLikeTick(_ line: UnsafeRawBufferPointer) -> Bool {
        var cursor = Cursor(line)
        return cursor.expect(prefix)
    }

    /// Scans one line given as bytes (with or without its trailing `\n`).
    /// - Returns: the fields, or `nil` when the line is not a canonical Tick line.
    public static func scan(_ line: UnsafeRawBufferPointer) -> Fields? {
        var cursor = Cursor(line)
        guard cursor.expect(prefix), let link = cursor.unsigned(),
            cursor.expect(#","sequence":"#), let sequence = cursor.unsigned(),
            cursor.expect(#","timestamp":"#), let timestamp = cursor.seconds(),
            cursor.expect(#","targetTimestamp":"#), cursor.seconds() != nil,
            cursor.expect(#","duration":"#), cursor.seconds() != nil,
            cursor.expect(#","refreshRate":"#), cursor.number(),
            cursor.expect(#","callbackRate":"#), cursor.number()
        else { return nil }
        let boosted = cursor.expect(#","boosted":true"#)
        if cursor.expect(#","targetPresentationTimestamp":"#), cursor.seconds() == nil { return nil }
        if cursor.expect(#","timelines":["#), !cursor.skipTimelines() { return nil }
        guard cursor.expect(#","skipped":"#), let skipped = cursor.unsigned(),
            cursor.expect("}}")
        else { return nil }
        _ = cursor.expect("\n")
        guard cursor.atEnd else { return nil }
        var fields = Fields(link: link, sequence: sequence, timestampNanoseconds: timestamp, skipped: skipped)
        fields.boosted = boosted
        return fields
    }

    /// Scans the readable bytes of `line` (with or without its trailing `\n`); the reader index does not move.
    /// - Returns: the fields, or `nil` when the line is not a canonical Tick line.
    public static func scan(_ line: ByteBuffer) -> Fields? {
        line.withUnsafeReadableBytes { scan($0) }
    }

    /// A read position in a line; every method advances only on success of its whole token.
    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        /// Consumes `literal` if the line continues with it (one `memcmp`: the prefix alone
        /// is 75 bytes, compared a byte at a time it was most of the scan).
        @inline(__always)
        mutating func expect(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard count > 0 else { return true }
            guard bytes.count - index >= count, let base = bytes.baseAddress,
                memcmp(base + index, literal.utf8Start, count) == 0
            else { return false }
            index += count
            return true
        }

        /// Consumes a run of decimal digits, at most `limit` of them.
        /// - Returns: the digits' value and count, or `nil` when there is no digit or more than `limit`.
        ///
        /// A Tick line has about 70 digits, so this loop is most of a scan. It keeps the
        /// position, the end and the base address in locals and stores the index once: going
        /// through `self` for each byte re-read them and stored the index at every digit (a
        /// scan of a daemon's line went from 1,720 to 1,470 instructions under callgrind,
        /// and from 108 to 77 ns).
        @inline(__always)
        mutating func digits(limit: Int) -> (value: UInt64, count: Int)? {
            guard let base = bytes.baseAddress else { return nil }
            let start = index
            let end = bytes.count
            var position = start
            var value: UInt64 = 0
            while position < end {
                let digit = base.load(fromByteOffset: position, as: UInt8.self) &- UInt8(ascii: "0")
                guard digit <= 9 else { break }
                guard position - start < limit else { return nil }
                value = value &* 10 &+ UInt64(digit)
                position += 1
            }
            index = position
            return position == start ? nil : (value, position - start)
        }

        /// An unsigned JSON integer (no sign, no leading zero) that fits in 63 bits with room to
        /// spare: at most 18 digits, which covers every id, sequence and skip count the daemon writes.
        mutating func unsigned() -> UInt64? {
            let start = index
            guard let (value, count) = digits(limit: 18) else { return nil }
            if count > 1 && bytes[start] == UInt8(ascii: "0") { return nil }
            return value
        }

        /// Seconds as `digits[.digits]`, at most nine decimals.
        /// - Returns: whole nanoseconds, or `nil` when malformed or beyond `Int64`.
        mutating func seconds() -> Int64? {
            let start = index
            guard let (whole, count) = digits(limit: 10) else { return nil }  // < 10^10 s: 317 years of uptime
            if count > 1 && bytes[start] == UInt8(ascii: "0") { return nil }
            // Ten digits reach 9,999,999,999 s: past `Int64` in nanoseconds from 9,223,372,037 s.
            var (nanoseconds, overflow) = Int64(whole).multipliedReportingOverflow(by: 1_000_000_000)
            guard !overflow else { return nil }
            if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard let (fraction, decimals) = digits(limit: 9) else { return nil }
                var scaled = fraction
                for _ in decimals..<9 { scaled *= 10 }
                (nanoseconds, overflow) = nanoseconds.addingReportingOverflow(Int64(scaled))
                guard !overflow else { return nil }
            }
            return nanoseconds
        }

        /// Consumes the rest of a `timelines` array after its `[`: entries
        /// `{"vsyncId":N,"deadline":T,"presentationTime":T}` separated by commas, then `]`.
        mutating func skipTimelines() -> Bool {
            var first = true
            while !expect("]") {
                if !first { guard expect(",") else { return false } }
                first = false
                guard expect(#"{"vsyncId":"#), unsigned() != nil, expect(#","deadline":"#), seconds() != nil,
                    expect(#","presentationTime":"#), seconds() != nil, expect("}")
                else { return false }
            }
            return true
        }

        /// Any RFC 8259 number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() -> Bool {
            let start = index
            if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            guard let (_, count) = digits(limit: 400) else { index = start; return false }
            if count > 1 && bytes[integerStart] == UInt8(ascii: "0") { index = start; return false }
            if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits(limit: 400) != nil else { index = start; return false }
            }
            if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
                index += 1
                if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
                guard digits(limit: 400) != nil else { index = start; return false }
            }
            return true
        }
    }
}

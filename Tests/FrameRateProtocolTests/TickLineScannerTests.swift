import FrameRateModel
import FrameRateProtocol
import NIOCore
import Testing

/// `TickLineScanner` against `TickLineEncoder`: whatever the encoder writes, the scanner
/// reads back exactly; anything that is not a canonical Tick line is rejected.
@Suite struct TickLineScannerTests {
    /// One line as the daemon writes it.
    static func encode(
        link: UInt64, sequence: UInt64, skipped: UInt64, timestamp: Int64, target: Int64? = nil,
        duration: Int64 = 8_333_333, refreshRate: Double = 120, callbackRate: Double = 120
    ) -> ByteBuffer {
        let shared = TickLineEncoder.sharedFields(
            timestamp: timestamp, targetTimestamp: target ?? timestamp + duration, duration: duration,
            refreshRate: refreshRate, callbackRate: callbackRate, allocator: ByteBufferAllocator()
        )
        var line = ByteBufferAllocator().buffer(capacity: 256)
        TickLineEncoder.write(link: link, sequence: sequence, skipped: skipped, shared: shared, into: &line)
        return line
    }

    static func scan(_ text: String) -> TickLineScanner.Fields? {
        TickLineScanner.scan(ByteBuffer(string: text))
    }

    static let valid =
        #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":7,"sequence":42,"timestamp":1234.500000001,"targetTimestamp":1234.508333334,"duration":0.008333333,"refreshRate":120.0,"callbackRate":120.0,"skipped":3}}"#

    @Test func readsTheFieldsOfAHandWrittenLine() throws {
        let fields = try #require(Self.scan(Self.valid + "\n"))
        #expect(fields == .init(link: 7, sequence: 42, timestampNanoseconds: 1_234_500_000_001, skipped: 3))
        #expect(Self.scan(Self.valid) == fields)  // the newline is optional
    }

    /// (link, sequence, skipped, timestamp in ns): small, boundary and large values.
    static let roundTripCases: [(UInt64, UInt64, UInt64, Int64)] = [
        (1, 1, 0, 0),
        (9, 10, 9, 999_999_999),
        (4096, 123_456_789, 1, 1_000_000_000),
        (999_999_999_999, 999_999_999_999_999_999, 999_999_999_999_999_999, 86_400 * 365 * 1_000_000_000),
        (12, 3, 0, 5_000_000_000_123),
    ]

    /// Every digit count, including the 20 digits of `UInt64.max`, in each decimal field.
    @Test(arguments: [0, 9, 10, 99, 100, 1_000_000, 9_999_999_999_999_999_999, 10_000_000_000_000_000_000, UInt64.max] as [UInt64])
    func writesEachDecimalFieldExactly(value: UInt64) {
        let line = String(buffer: Self.encode(link: value, sequence: value, skipped: value, timestamp: 1))
        #expect(line.hasPrefix(#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":\#(value),"sequence":\#(value),"timestamp":"#))
        #expect(line.hasSuffix(#","skipped":\#(value)}}"# + "\n"))
    }

    @Test(arguments: roundTripCases)
    func roundTripsWhatTheEncoderWrites(link: UInt64, sequence: UInt64, skipped: UInt64, timestamp: Int64) throws {
        let line = Self.encode(link: link, sequence: sequence, skipped: skipped, timestamp: timestamp)
        let fields = try #require(TickLineScanner.scan(line))
        #expect(fields == .init(link: link, sequence: sequence, timestampNanoseconds: timestamp, skipped: skipped))
        // And agrees with the general parser.
        let text = String(buffer: line).dropLast()
        guard case .single(.notification(let method, let params)) = try JSONRPCClientInbound.parse(line: String(text)) else {
            Issue.record("not a notification")
            return
        }
        #expect(method == V1Method.tick.rawValue)
        let tick = try TickNotification(json: params)
        #expect(tick.link.rawValue == link && tick.sequence == sequence && tick.skipped == skipped)
        #expect(abs(tick.timestamp - Double(timestamp) / 1e9) < 1e-6)
    }

    @Test func roundTripsOtherRates() throws {
        for (refresh, callback) in [(120.0, 60.0), (80.0, 40.0), (48.0, 24.0), (10.0, 10.0), (120.0, 13.333333333333334)] {
            let line = Self.encode(
                link: 3, sequence: 8, skipped: 0, timestamp: 77_000_000_000, duration: Int64(1e9 / refresh),
                refreshRate: refresh, callbackRate: callback
            )
            #expect(TickLineScanner.scan(line) == .init(link: 3, sequence: 8, timestampNanoseconds: 77_000_000_000, skipped: 0))
        }
    }

    @Test func readsSeveralCoalescedLinesOneByOne() throws {
        var batch = Self.encode(link: 1, sequence: 5, skipped: 0, timestamp: 10_000_000_000)
        var second = Self.encode(link: 2, sequence: 6, skipped: 1, timestamp: 10_000_000_000)
        batch.writeBuffer(&second)
        var seen: [TickLineScanner.Fields] = []
        let view = batch.readableBytesView
        var start = view.startIndex
        while let newline = view[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = batch.getSlice(at: start, length: newline + 1 - start)!
            seen.append(try #require(TickLineScanner.scan(line)))
            start = newline + 1
        }
        #expect(seen.map(\.link) == [1, 2] && seen.map(\.skipped) == [0, 1])
    }

    @Test func shorterFractionsAreScaledToNanoseconds() {
        let line = Self.valid.replacing("1234.500000001", with: "1234.5")
        #expect(Self.scan(line)?.timestampNanoseconds == 1_234_500_000_000)
        let whole = Self.valid.replacing("1234.500000001", with: "1234")
        #expect(Self.scan(whole)?.timestampNanoseconds == 1_234_000_000_000)
    }

    @Test("a time beyond Int64 nanoseconds is refused, not a trap; the largest that fits is read")
    func timesAtTheEdgeOfInt64() {
        let largest = Self.valid.replacing("1234.500000001", with: "9223372036.854775807")
        #expect(Self.scan(largest)?.timestampNanoseconds == Int64.max)
        for beyond in ["9223372036.854775808", "9223372037", "9999999999.999999999"] {
            #expect(Self.scan(Self.valid.replacing("1234.500000001", with: beyond)) == nil, "\(beyond)")
            // Every time field alike, also those a receiver does not keep.
            #expect(Self.scan(Self.valid.replacing("1234.508333334", with: beyond)) == nil, "targetTimestamp \(beyond)")
        }
    }

    @Test(arguments: [
        ("", "empty"),
        ("{}", "not a tick"),
        (#"{"jsonrpc":"2.0","id":1,"result":{"link":7,"refreshRate":120.0,"callbackRate":120.0}}"#, "a response"),
        (#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Closed","params":{"link":7}}"#, "another notification"),
        ("link\":7,", "garbage"),
    ])
    func rejectsOtherLines(_ line: String, _ why: String) {
        #expect(Self.scan(line) == nil, "\(why)")
    }

    /// Each mutation of the valid line must be rejected.
    @Test(arguments: [
        ("\"link\":7", "\"link\":-7"),  // negative id
        ("\"link\":7", "\"link\":07"),  // leading zero
        ("\"link\":7", "\"link\":"),  // missing value
        ("\"link\":7", "\"link\":7.5"),  // not an integer
        ("\"link\":7", "\"link\":1234567890123456789"),  // beyond 18 digits
        ("\"link\":7", "\"link\":7/"),  // the byte below "0" after a digit
        ("\"link\":7", "\"link\":7:"),  // the byte above "9" after a digit
        ("\"sequence\":42", "\"sequence\":4\u{E9}2"),  // a non-ASCII byte within the digits
        ("\"sequence\":42", "\"sequence\":\"42\""),  // a string
        ("\"sequence\":42", "\"seq\":42"),  // renamed
        ("1234.500000001", "1234.5000000012"),  // ten decimals
        ("1234.500000001", "1234."),  // no decimals after the point
        ("1234.500000001", "-1234.5"),  // negative time
        ("1234.500000001", "1.2e3"),  // exponent in a time
        ("\"refreshRate\":120.0", "\"refreshRate\":120."),  // bad number
        ("\"refreshRate\":120.0", "\"refreshRate\":NaN"),  // not a number
        ("\"callbackRate\":120.0", "\"callbackRate\":1e"),  // bad exponent
        ("\"skipped\":3}}", "\"skipped\":3}"),  // unbalanced
        ("\"skipped\":3}}", "\"skipped\":3}} "),  // trailing space
        ("\"skipped\":3}}", "\"skipped\":3,\"extra\":1}}"),  // an extra member
        ("\"skipped\":3}}", "\"skipped\":3}}\n\n"),  // two newlines
        ("{\"jsonrpc\"", "{ \"jsonrpc\""),  // whitespace
        ("\"duration\":0.008333333,", ""),  // a member missing
    ])
    func rejectsMalformedTicks(_ original: String, _ replacement: String) {
        let mutated = Self.valid.replacing(original, with: replacement)
        #expect(mutated != Self.valid)
        #expect(Self.scan(mutated) == nil, "\(mutated)")
    }

    @Test func rejectsEveryTruncation() {
        let bytes = Array((Self.valid + "\n").utf8)
        for length in 0..<(bytes.count - 1) {
            let truncated = bytes[0..<length]
            let result = truncated.withUnsafeBytes { TickLineScanner.scan($0) }
            #expect(result == nil, "accepted the first \(length) bytes")
        }
    }

    @Test func looksLikeTickTestsOnlyThePrefix() {
        #expect(Array(Self.valid.utf8).withUnsafeBytes { TickLineScanner.looksLikeTick($0) })
        #expect(!Array(#"{"jsonrpc":"2.0","id":1,"result":{}}"#.utf8).withUnsafeBytes { TickLineScanner.looksLikeTick($0) })
    }
}

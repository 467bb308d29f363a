import FrameRateModel
import FrameRateProtocol
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import FrameRateServer

/// Inputs a hostile local user sends (issue 10): none may crash the daemon, and every error
/// quotes what was sent truthfully and briefly.
@Suite struct HostileInputTests {
    /// Ranges that aborted the daemon in `FrameRateMath.divisors` ("Double value cannot be
    /// converted to Int"), with how the rejection quotes the minimum.
    static let crashingRanges: [(range: String, quoted: String)] = [
        (#"{"minimum":1e-300,"maximum":1e-300}"#, "1e-300"),
        (#"{"minimum":5e-324,"maximum":60}"#, "5e-324"),
        (#"{"minimum":1e-18,"maximum":1e-18}"#, "1e-18"),
        (#"{"minimum":3e-6,"maximum":3e-6}"#, "3e-6"),
        (#"{"minimum":0.00999,"maximum":60,"preferred":30}"#, "0.00999"),
    ]

    @Test(arguments: crashingRanges)
    func registerBelowTheLowestRateIsInvalidArgument(_ testCase: (range: String, quoted: String)) throws {
        let server = ServerHarness()
        let client = try server.connect()
        #expect(
            try client.request(.register, #"{"range":\#(testCase.range)}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid range: minimum must be at least 0.01 Hz (the lowest accepted rate), got \#(testCase.quoted)","data":{"status":"INVALID_ARGUMENT","field":"range.minimum"}}}"#
        )
        #expect(server.compositor.linkCount == 0)
        // The daemon is still there, and arbitrates and ticks as before.
        _ = try client.register(60, 60, 60)
        try server.runNextVsync()
        #expect(try client.lines().count == 1)
    }

    @Test(arguments: crashingRanges)
    func updateBelowTheLowestRateIsInvalidArgument(_ testCase: (range: String, quoted: String)) throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(30, 60, 60)
        let error = try client.error(.update, #"{"link":\#(link),"range":\#(testCase.range)}"#)
        #expect(error.code == -32602 && error.grpcStatus == .invalidArgument)
        #expect(error.data?["field"] == "range.minimum")
        #expect(error.message.hasSuffix("got \(testCase.quoted)"), "\(error.message)")
        // The link keeps its range and keeps ticking.
        #expect(try client.result(.getState)["displays"]?[0]?["links"]?[0]?["range"]?["minimum"]?.doubleValue == 30)
        try server.runNextVsync()
        #expect(try client.lines().count <= 1)
    }

    @Test func theLowestAndHighestAcceptedRatesAreAccepted() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let slowest = try client.register(0.01, 0.01, 0.01)
        let fastest = try client.register(1000, 1000, 1000, extra: #","highFrameRate":true"#)
        let links = try #require(try client.result(.getState)["displays"]?[0]?["links"]?.arrayValue)
        let slowLink = try #require(links.first { $0["link"]?.int64Value == Int64(slowest) })
        #expect(slowLink["callbackRate"]?.doubleValue.map { FrameRateMath.equal($0, 0.01) } == true)
        #expect(links.contains { $0["link"]?.int64Value == Int64(fastest) })
    }

    @Test(
        arguments: [
            // §6: a rejected value is printed as sent, never rounded or turned into inf.
            (#"{"minimum":10,"maximum":1000.0001}"#, "maximum must be at most 1000 Hz (the highest accepted rate), got 1000.0001", "range.maximum"),
            (#"{"minimum":10,"maximum":1.7e308}"#, "maximum must be at most 1000 Hz (the highest accepted rate), got 1.7e308", "range.maximum"),
            (#"{"minimum":10,"maximum":60,"preferred":60.00000001}"#, "(10...60 Hz), got 60.00000001", "range.preferred"),
            (#"{"minimum":90.50,"maximum":60.0}"#, "maximum (60.0 Hz) must be at least minimum (90.50 Hz)", "range.maximum"),
            (#"{"minimum":1E-3,"maximum":60}"#, "got 1E-3", "range.minimum"),
        ] as [(String, String, String)]
    )
    func rejectedRangesQuoteTheValuesAsSent(range: String, says: String, field: String) throws {
        let client = try ServerHarness().connect()
        let error = try client.error(.register, #"{"range":\#(range)}"#)
        #expect(error.message.hasSuffix(says), "\(error.message)")
        #expect(error.data?["field"]?.stringValue == field)
    }

    @Test func longNumbersAreShortened() throws {
        // A line longer than the default 64 KiB would be refused before it is parsed.
        let client = try ServerHarness(limits: .init(lineLength: 1 << 21)).connect()
        let digits = "1" + String(repeating: "0", count: 99_999)
        let error = try client.error(.register, #"{"range":{"minimum":10,"maximum":\#(digits)}}"#)
        #expect(error.message == "range.maximum is out of range: 1" + String(repeating: "0", count: 31) + "… (100000 digits)")
        // A finite but long one goes through the range rules, and is shortened there too.
        let long = "1001." + String(repeating: "0", count: 1_000) + "1"
        let rule = try client.error(.register, #"{"range":{"minimum":10,"maximum":\#(long)}}"#)
        #expect(rule.message.hasSuffix("got 1001." + String(repeating: "0", count: 27) + "… (1006 characters)"), "\(rule.message)")
        let link = try client.error(.update, #"{"link":\#(digits)}"#)
        #expect(link.message.count < 120, "\(link.message)")
    }

    @Test(
        arguments: [
            ("\u{FEFF}range", "unknown field '<U+FEFF BYTE ORDER MARK>range'"),
            ("range\u{A0}", "unknown field 'range<U+00A0 NO-BREAK SPACE>'"),
            ("ran\u{200B}ge", "unknown field 'ran<U+200B ZERO WIDTH SPACE>ge'"),
            ("ra\u{1B}[2Jnge", "unknown field 'ra<U+001B ESCAPE>[2Jnge'"),
        ]
    )
    func invisibleCharactersInFieldNamesAreNamed(key: String, says: String) throws {
        let client = try ServerHarness().connect()
        let params = JSONSerializer.string(["\(key)": ["minimum": 30, "maximum": 60]])
        let error = try client.error(.register, params)
        #expect(error.message.hasPrefix(says), "\(error.message)")
        #expect(!error.message.unicodeScalars.contains { $0 == "\u{FEFF}" || $0 == "\u{A0}" || $0 == "\u{200B}" || $0 == "\u{1B}" })
    }

    @Test func aLineStartingWithAByteOrderMarkIsNamedInTheParseError() throws {
        let client = try ServerHarness().connect()
        let reply = try client.call("\u{FEFF}" + requestLine(V1Method.healthCheck.rawValue, nil, id: 1))
        #expect(
            reply
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"status":"INVALID_ARGUMENT","detail":"unexpected character U+FEFF BYTE ORDER MARK at byte 0; expected a JSON value"}}}"#
        )
    }

    @Test func aHugeUnknownMethodIsNotEchoedInFull() throws {
        let client = try ServerHarness(limits: .init(lineLength: 1 << 21)).connect()
        let method = String(repeating: "m", count: 1_000_000)
        let reply = try client.call(requestLine(method, nil, id: 1))
        #expect(reply.utf8.count < 400, "\(reply.prefix(400))")
        let error = try client.error("a\u{2028}b", nil)
        #expect(error.data?["method"] == "a<U+2028 LINE SEPARATOR>b")
    }

    @Test func thermalStateIsQuotedBriefly() throws {
        let client = try ServerHarness().connect()
        let error = try client.error(.setCaps, #"{"thermalState":"\u00a0hot"}"#)
        #expect(error.message.hasSuffix(#"got "<U+00A0 NO-BREAK SPACE>hot""#), "\(error.message)")
    }
}

@Suite struct RejectionLoggingTests {
    @Test func aFloodOfBadRequestsLogsTenLinesPerConnection() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        let flooder = try server.connect(Peers.user)
        // 25 rejections in well under the 10 s window.
        for id in 1...25 { _ = try flooder.call(requestLine("framerate.v1.Nope/\(id)", nil, id: id)) }
        #expect(log.messages.filter { $0.hasPrefix("request rejected:") }.count == 10)
        // Another connection has its own allowance.
        let other = try server.connect()
        _ = try other.error(.register, #"{"range":{"minimum":1e-300,"maximum":1e-300}}"#)
        let rejections = log.messages.filter { $0.hasPrefix("request rejected:") }
        #expect(rejections.count == 11)
        #expect(rejections.last?.hasSuffix("got 1e-300") == true)
    }
}

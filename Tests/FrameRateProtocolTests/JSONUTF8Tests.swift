import FrameRateProtocol
import Testing

@Suite("JSONParser: UTF-8 validation")
struct JSONUTF8Tests {
    struct Sample: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        var testDescription: String { name }
    }

    /// Ill-formed sequences, each placed inside a string literal.
    static let illFormed: [Sample] = [
        Sample(name: "lone continuation byte", bytes: [0x80]),
        Sample(name: "lone continuation byte BF", bytes: [0xBF]),
        Sample(name: "overlong NUL C0 80", bytes: [0xC0, 0x80]),
        Sample(name: "overlong C1 BF", bytes: [0xC1, 0xBF]),
        Sample(name: "overlong three-byte E0 80 80", bytes: [0xE0, 0x80, 0x80]),
        Sample(name: "overlong three-byte E0 9F BF", bytes: [0xE0, 0x9F, 0xBF]),
        Sample(name: "overlong four-byte F0 80 80 80", bytes: [0xF0, 0x80, 0x80, 0x80]),
        Sample(name: "overlong four-byte F0 8F BF BF", bytes: [0xF0, 0x8F, 0xBF, 0xBF]),
        Sample(name: "encoded high surrogate U+D800", bytes: [0xED, 0xA0, 0x80]),
        Sample(name: "encoded low surrogate U+DFFF", bytes: [0xED, 0xBF, 0xBF]),
        Sample(name: "encoded surrogate pair", bytes: [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]),
        Sample(name: "above U+10FFFF F4 90 80 80", bytes: [0xF4, 0x90, 0x80, 0x80]),
        Sample(name: "lead byte F5", bytes: [0xF5, 0x80, 0x80, 0x80]),
        Sample(name: "lead byte F8 (five-byte form)", bytes: [0xF8, 0x88, 0x80, 0x80, 0x80]),
        Sample(name: "byte FE", bytes: [0xFE]),
        Sample(name: "byte FF", bytes: [0xFF]),
        Sample(name: "two-byte lead followed by ASCII", bytes: [0xC3, 0x41]),
        Sample(name: "three-byte sequence cut short", bytes: [0xE2, 0x82]),
        Sample(name: "four-byte sequence cut short", bytes: [0xF0, 0x9F, 0x98]),
        Sample(name: "continuation byte where a lead is expected", bytes: [0xC3, 0xA9, 0xA9]),
    ]

    @Test(arguments: illFormed)
    func rejectedInsideStrings(_ sample: Sample) throws {
        let document = Array(#"{"k":"ok "#.utf8) + sample.bytes + Array(#" ok"}"#.utf8)
        let error = try #require(parseError(document))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset >= 9 && error.offset < 9 + sample.bytes.count)
        #expect(error.message == "invalid UTF-8 at byte \(error.offset)")
    }

    @Test(arguments: illFormed)
    func rejectedInsideKeys(_ sample: Sample) throws {
        let document = Array(#"{""#.utf8) + sample.bytes + Array(#"":1}"#.utf8)
        #expect(parseError(document)?.kind == .invalidUTF8)
    }

    /// Outside strings, the first sequence is reported; skip the sample that starts well-formed.
    @Test(arguments: illFormed.filter { $0.bytes.first != 0xC3 || $0.bytes.count == 2 })
    func rejectedOutsideStrings(_ sample: Sample) throws {
        let document = Array("[1, ".utf8) + sample.bytes + Array("]".utf8)
        let error = try #require(parseError(document))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == 4)
    }

    @Test func truncatedAtEndOfInput() throws {
        let error = try #require(parseError([UInt8(ascii: "\""), 0xE2, 0x82]))
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == 1)
    }

    @Test func invalidUTF8AfterTheValue() throws {
        let error = try #require(parseError(Array("1 ".utf8) + [0xFF]))
        #expect(error.kind == .invalidUTF8)
        #expect(error.message == "invalid UTF-8 at byte 2")
    }

    @Test func byteOrderMarkIsNotWhitespace() throws {
        let error = try #require(parseError([0xEF, 0xBB, 0xBF] + Array("1".utf8)))
        #expect(error.kind == .unexpectedCharacter)
    }

    @Test func wellFormedBoundariesAreAccepted() throws {
        let samples: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sample in samples {
            let value = try JSONParser().parse([UInt8(ascii: "\"")] + sample + [UInt8(ascii: "\"")])
            #expect(value.stringValue.map { Array($0.utf8) } == sample)
        }
    }
}

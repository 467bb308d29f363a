import FrameRateProtocol
import Testing

@Suite("JSONParser: malformed input")
struct JSONParserErrorTests {
    struct Bad: CustomTestStringConvertible, Sendable {
        let input: String
        let kind: JSONParseError.Kind
        let offset: Int
        var messageContains: String? = nil
        var testDescription: String { input.debugDescription }
    }

    static let cases: [Bad] = [
        // Empty and truncated documents.
        Bad(input: "", kind: .unexpectedEndOfInput, offset: 0, messageContains: "unexpected end of input at byte 0"),
        Bad(input: "   ", kind: .unexpectedEndOfInput, offset: 3),
        Bad(input: "[", kind: .unexpectedEndOfInput, offset: 1),
        Bad(input: "[1", kind: .unexpectedEndOfInput, offset: 2, messageContains: "expected ',' or ']'"),
        Bad(input: "[1,", kind: .unexpectedEndOfInput, offset: 3),
        Bad(input: "{", kind: .unexpectedEndOfInput, offset: 1, messageContains: "expected a string key"),
        Bad(input: #"{"a""#, kind: .unexpectedEndOfInput, offset: 4, messageContains: "expected ':'"),
        Bad(input: #"{"a":"#, kind: .unexpectedEndOfInput, offset: 5),
        Bad(input: #"{"a":1"#, kind: .unexpectedEndOfInput, offset: 6, messageContains: "expected ',' or '}'"),
        Bad(input: #""abc"#, kind: .unexpectedEndOfInput, offset: 4, messageContains: "unterminated string started at byte 0"),
        Bad(input: #""abc\"#, kind: .unexpectedEndOfInput, offset: 5),
        Bad(input: #""\u12"#, kind: .unexpectedEndOfInput, offset: 5),
        Bad(input: "tru", kind: .unexpectedEndOfInput, offset: 3),
        Bad(input: "nul", kind: .unexpectedEndOfInput, offset: 3),
        Bad(input: "-", kind: .unexpectedEndOfInput, offset: 1),
        // Structural mistakes.
        Bad(input: "x", kind: .unexpectedCharacter, offset: 0, messageContains: "unexpected character 'x' at byte 0"),
        Bad(input: #"{"jsonrpc": "2.0", x}"#, kind: .unexpectedCharacter, offset: 19, messageContains: "unexpected character 'x' at byte 19"),
        Bad(input: "[1,]", kind: .unexpectedCharacter, offset: 3),
        Bad(input: #"{"a":1,}"#, kind: .unexpectedCharacter, offset: 7, messageContains: "expected a string key"),
        Bad(input: "{a:1}", kind: .unexpectedCharacter, offset: 1),
        Bad(input: #"{"a" 1}"#, kind: .unexpectedCharacter, offset: 5, messageContains: "expected ':'"),
        Bad(input: "[1 2]", kind: .unexpectedCharacter, offset: 3),
        Bad(input: "[1}", kind: .unexpectedCharacter, offset: 2),
        Bad(input: "True", kind: .unexpectedCharacter, offset: 0),
        Bad(input: "nulL", kind: .unexpectedCharacter, offset: 3),
        Bad(input: "'a'", kind: .unexpectedCharacter, offset: 0, messageContains: "double quotes"),
        Bad(input: "\u{0B}1", kind: .unexpectedCharacter, offset: 0, messageContains: "U+000B"),
        // Invisible characters are named, never printed raw (issue 10 §6).
        Bad(input: "\u{A0}1", kind: .unexpectedCharacter, offset: 0, messageContains: "unexpected character U+00A0 NO-BREAK SPACE at byte 0"),
        Bad(input: "\u{FEFF}{}", kind: .unexpectedCharacter, offset: 0, messageContains: "unexpected character U+FEFF BYTE ORDER MARK at byte 0"),
        Bad(input: "[1,\u{200B}2]", kind: .unexpectedCharacter, offset: 3, messageContains: "U+200B ZERO WIDTH SPACE"),
        // Comments.
        Bad(input: "// c\n1", kind: .unexpectedCharacter, offset: 0, messageContains: "comments are not allowed"),
        Bad(input: "[1 /* c */]", kind: .unexpectedCharacter, offset: 3, messageContains: "comments are not allowed"),
        // Trailing garbage.
        Bad(input: "1 2", kind: .trailingCharacters, offset: 2),
        Bad(input: "{} {}", kind: .trailingCharacters, offset: 3),
        Bad(input: "truex", kind: .trailingCharacters, offset: 4),
        Bad(input: "1x", kind: .trailingCharacters, offset: 1),
        Bad(input: "[]]", kind: .trailingCharacters, offset: 2),
        Bad(input: "1\u{0}", kind: .trailingCharacters, offset: 1),
        // Numbers.
        Bad(input: "01", kind: .invalidNumber, offset: 0, messageContains: "leading zeros"),
        Bad(input: "-01", kind: .invalidNumber, offset: 0, messageContains: "leading zeros"),
        Bad(input: "00", kind: .invalidNumber, offset: 0),
        Bad(input: "+1", kind: .invalidNumber, offset: 0, messageContains: "must not start with '+'"),
        Bad(input: ".5", kind: .invalidNumber, offset: 0, messageContains: "must start with a digit"),
        Bad(input: "1.", kind: .unexpectedEndOfInput, offset: 2, messageContains: "after the decimal point"),
        Bad(input: "[1.]", kind: .invalidNumber, offset: 3, messageContains: "after the decimal point"),
        Bad(input: "1.e5", kind: .invalidNumber, offset: 2),
        Bad(input: "1e", kind: .unexpectedEndOfInput, offset: 2),
        Bad(input: "1e+", kind: .unexpectedEndOfInput, offset: 3),
        Bad(input: "[1e-]", kind: .invalidNumber, offset: 4),
        Bad(input: "-a", kind: .invalidNumber, offset: 1),
        Bad(input: "0x10", kind: .trailingCharacters, offset: 1),
        // Non-finite numbers.
        Bad(input: "NaN", kind: .nonFiniteNumber, offset: 0, messageContains: "NaN is not valid JSON; use null"),
        Bad(input: "Infinity", kind: .nonFiniteNumber, offset: 0, messageContains: "Infinity is not valid JSON; use null"),
        Bad(input: "-Infinity", kind: .nonFiniteNumber, offset: 0, messageContains: "-Infinity is not valid JSON; use null"),
        Bad(input: #"{"hz": NaN}"#, kind: .nonFiniteNumber, offset: 7),
        Bad(input: "[1, Infinity]", kind: .nonFiniteNumber, offset: 4),
        // Strings.
        Bad(input: "\"a\nb\"", kind: .controlCharacterInString, offset: 2, messageContains: "U+000A"),
        Bad(input: "\"\t\"", kind: .controlCharacterInString, offset: 1),
        Bad(input: "\"\u{0}\"", kind: .controlCharacterInString, offset: 1),
        Bad(input: "\"\u{1F}\"", kind: .controlCharacterInString, offset: 1),
        Bad(input: #""\x""#, kind: .invalidEscape, offset: 1, messageContains: "'x'"),
        Bad(input: #""\U0041""#, kind: .invalidEscape, offset: 1),
        Bad(input: #""\'""#, kind: .invalidEscape, offset: 1),
        Bad(input: #""\u12G4""#, kind: .invalidEscape, offset: 1, messageContains: "4 hex digits"),
        Bad(input: #""\uD83D""#, kind: .invalidEscape, offset: 1, messageContains: #"lone surrogate \uD83D"#),
        Bad(input: #""\uD83Dx""#, kind: .invalidEscape, offset: 1),
        Bad(input: #""\uD83D\n""#, kind: .invalidEscape, offset: 1),
        Bad(input: #""\uD83D\uD83D""#, kind: .invalidEscape, offset: 1),
        Bad(input: #""\uDE00""#, kind: .invalidEscape, offset: 1, messageContains: #"lone surrogate \uDE00"#),
        Bad(input: #""\uDE00\uD83D""#, kind: .invalidEscape, offset: 1),
        // Nesting.
        Bad(input: String(repeating: "[", count: 10_000), kind: .nestingTooDeep, offset: 64, messageContains: "nesting deeper than 64 levels"),
        Bad(input: String(repeating: #"{"a":"#, count: 10_000), kind: .nestingTooDeep, offset: 64 * 5),
        Bad(input: String(repeating: "[{\"a\":", count: 5_000), kind: .nestingTooDeep, offset: 32 * 6),
    ]

    @Test(arguments: cases)
    func rejected(_ bad: Bad) throws {
        let error = try #require(parseError(bad.input))
        #expect(error.kind == bad.kind, "\(error.message)")
        #expect(error.offset == bad.offset, "\(error.message)")
        if let fragment = bad.messageContains {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
        #expect(error.message.contains("at byte \(bad.offset)") || error.message.contains("(at byte \(bad.offset))"))
    }

    @Test func deeplyNestedTenThousandBracketsClosedToo() throws {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let error = try #require(parseError(text))
        #expect(error.kind == .nestingTooDeep)
        #expect(error.message == "nesting deeper than 64 levels at byte 64")
    }

    @Test func everyPrefixOfAValidDocumentFailsCleanly() throws {
        let document = #"{"jsonrpc":"2.0","id":-12.5e3,"params":[true,false,null,"a\u00e9\uD83D\uDE00\n😀"],"method":"x"}"#
        let bytes = Array(document.utf8)
        _ = try JSONParser().parse(bytes)
        for length in 0..<bytes.count {
            let error = parseError(Array(bytes[..<length]))
            #expect(error != nil, "prefix of length \(length) parsed")
        }
    }

    @Test func everySingleByteDocumentIsHandled() {
        for byte in UInt8.min...UInt8.max {
            let error = parseError([byte])
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                #expect(error == nil)
            } else {
                #expect(error != nil, "byte \(byte)")
            }
        }
    }

    @Test func pseudoRandomGarbageNeverCrashes() {
        var generator = SplitMix64(seed: 0x5EED)
        let alphabet = Array(#"{}[]:,"\-0123456789.eE+tfnrulsaNI \#n\#t/u"#.utf8) + [0x80, 0xC3, 0xA9, 0xED, 0xF0, 0xFF, 0x00]
        for _ in 0..<3_000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            if let error = parseError(bytes) {
                #expect(error.offset >= 0 && error.offset <= bytes.count)
            } else if let value = try? JSONParser().parse(bytes) {
                // Whatever parses must survive a round trip.
                #expect((try? JSONParser().parse(JSONSerializer.bytes(value))) == value)
            }
        }
    }
}

/// A tiny deterministic generator so the fuzz test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

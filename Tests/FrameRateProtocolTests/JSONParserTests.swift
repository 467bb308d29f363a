import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSONParser: valid documents")
struct JSONParserTests {
    @Test func scalars() throws {
        #expect(try parse("null") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse("0") == .number(JSONNumber(0)))
        #expect(try parse(#""""#) == .string(""))
        #expect(try parse(#""abc""#) == .string("abc"))
    }

    @Test func containersKeepOrderAndStructure() throws {
        let value = try parse(#"{"b":[1,{"c":null}],"a":{},"z":[]}"#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["b", "a", "z"])
        #expect(value["b"]?[1]?["c"] == .null)
        #expect(value["a"] == .object(JSONObject()))
        #expect(value["z"] == .array([]))
        #expect(value["missing"] == nil)
        #expect(value["b"]?[2] == nil)
    }

    @Test(arguments: [" 1", "1 ", "\t\n\r 1 \r\n\t", "\n[ 1 , 2 ]\n", "{ \"a\" : 1 }"])
    func whitespaceAroundTokensIsAllowed(_ text: String) throws {
        _ = try parse(text)
    }

    @Test(arguments: [
        "0", "-0", "1", "-1", "10", "0.5", "-0.5", "1.50", "1e5", "1E5", "1e+5", "1e-5", "1.5e-05",
        "12345678901234567890", "0e0", "-0.0e-0",
    ])
    func numbersKeepTheirExactText(_ text: String) throws {
        #expect(try parse(text) == .number(try #require(JSONNumber(text: text))))
        #expect(try parse(text).numberValue?.text == text)
    }

    @Test func hugeNumbersParseAndKeepTheirText() throws {
        let fourHundredDigits = "9" + String(repeating: "0", count: 399)
        let big = try #require(try parse(fourHundredDigits).numberValue)
        #expect(big.text == fourHundredDigits)
        #expect(big.doubleValue == .infinity)
        #expect(big.finiteDoubleValue == nil)
        #expect(big.int64Value == nil)

        let exponent = try #require(try parse("1e400").numberValue)
        #expect(exponent.text == "1e400")
        #expect(exponent.doubleValue == .infinity)
        #expect(exponent.finiteDoubleValue == nil)

        let negative = try #require(try parse("-1e400").numberValue)
        #expect(negative.doubleValue == -.infinity)

        let tiny = try #require(try parse("1e-400").numberValue)
        #expect(tiny.doubleValue == 0)
        #expect(tiny.finiteDoubleValue == 0)
        #expect(tiny.int64Value == nil)
    }

    @Test func escapes() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u00E9\u4e2d""#) == .string("Aéé中"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse(#""a\uD83D\uDE00b""#) == .string("a😀b"))
        #expect(try parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try parse(#""x\ny\\n""#) == .string("x\ny\\n"))
    }

    @Test func rawUTF8InStrings() throws {
        #expect(try parse("\"é中😀\u{7F}\"") == .string("é中😀\u{7F}"))
        // Boundary scalars: U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF, and around the surrogates.
        let text = "\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}"
        #expect(try parse("\"" + text + "\"") == .string(text))
    }

    @Test func duplicateKeysAreKeptAndTheLastWins() throws {
        let value = try parse(#"{"a":1,"b":2,"a":3}"#)
        let object = try #require(value.objectValue)
        #expect(object.count == 3)
        #expect(object.keys == ["a", "b", "a"])
        #expect(value["a"] == 3)
        #expect(value.jsonString == #"{"a":1,"b":2,"a":3}"#)
    }

    @Test func allInputTypesAgree() throws {
        let text = #" {"k":[1,"two",null]} "#
        let expected = try parse(text)
        #expect(try JSONParser().parse(Array(text.utf8)) == expected)
        #expect(try JSONParser().parse(ByteBuffer(string: text)) == expected)
        #expect(try JSONParser().parse(text.utf8) == expected)
        // A non-contiguous collection takes the copying path.
        #expect(try JSONParser().parse(Array(text.utf8).lazy.map { $0 }) == expected)
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test func byteBufferReadableBytesOnly() throws {
        var buffer = ByteBuffer(string: "garbage[1]")
        buffer.moveReaderIndex(forwardBy: 7)
        #expect(try JSONParser().parse(buffer) == [1])
        #expect(buffer.readableBytes == 3)
    }

    @Test func depthLimitIsInclusive() throws {
        let depth64 = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(depth64) }
        let objects64 = String(repeating: #"{"a":"#, count: 64) + "1" + String(repeating: "}", count: 64)
        #expect(throws: Never.self) { try parse(objects64) }
        #expect(try parse("[[1]]", maximumDepth: 2) == [[1]])
        #expect(parseError("[[1]]", maximumDepth: 1)?.kind == .nestingTooDeep)
        #expect(try parse("1", maximumDepth: 0) == 1)
        #expect(parseError("[]", maximumDepth: 0)?.kind == .nestingTooDeep)
    }

    @Test func deepNestingWithinAConfiguredLargeLimitDoesNotRecurse() throws {
        let depth = 20_000
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let value = try parse(text, maximumDepth: depth)
        // Walk it iteratively, then take it apart iteratively so deinit does not recurse either.
        var current = value
        var levels = 0
        while case .array(let elements) = current, let first = elements.first {
            current = first
            levels += 1
        }
        #expect(levels == depth - 1)
        #expect(JSONSerializer.string(value) == text)
        current = .null
        dismantle(consume value)
    }

    /// Frees a deep value one level at a time (a plain release would recurse `depth` times).
    private func dismantle(_ value: consuming JSONValue) {
        var pending: [JSONValue] = [value]
        while let next = pending.popLast() {
            if case .array(let elements) = next { pending.append(contentsOf: elements) }
        }
    }
}

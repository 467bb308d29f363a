import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSONSerializer")
struct JSONSerializerTests {
    @Test func compactOutput() throws {
        let value = try parse(" { \"a\" : [ 1 , 2.50 , -0 , 1E+2 ] , \"b\" : { } , \"c\" : [ ] , \"d\" : null , \"e\" : true } ")
        #expect(value.jsonString == #"{"a":[1,2.50,-0,1E+2],"b":{},"c":[],"d":null,"e":true}"#)
    }

    @Test func stringEscaping() throws {
        let control = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
        let value = JSONValue.string("q\"b\\s/" + String(control) + "\u{7F}é😀\u{2028}")
        let expected = #""q\"b\\s/\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
            + "\u{7F}é😀\u{2028}\""
        #expect(value.jsonString == expected)
        #expect(try parse(expected) == value)
    }

    @Test func keysAreEscapedToo() throws {
        let value: JSONValue = ["a\"b\n": 1]
        #expect(value.jsonString == #"{"a\"b\n":1}"#)
        #expect(try parse(value.jsonString) == value)
    }

    @Test func byteBufferAppends() {
        var buffer = ByteBuffer(string: "prefix:")
        buffer.writeJSONValue(["x", 1, nil])
        #expect(String(buffer: buffer) == #"prefix:["x",1,null]"#)
        JSONSerializer.serialize(true, into: &buffer)
        #expect(String(buffer: buffer) == #"prefix:["x",1,null]true"#)
        #expect(JSONSerializer.bytes([:]) == Array("{}".utf8))
    }

    static let roundTripSamples: [String] = [
        "null", "true", "[]", "{}", #""""#, "0", "-0.0", "1.50", "12345678901234567890", "1e400",
        "9" + String(repeating: "9", count: 399),
        #"{"jsonrpc":"2.0","id":"abc","method":"m","params":{"a":[1,2,{"b":null}],"c":"\u0000x"}}"#,
        #"[[[[[[[[[[]]]]]]]]]]"#, #"{"a":1,"a":2}"#, #"["\uD83D\uDE00","\t","é"]"#,
    ]

    @Test(arguments: roundTripSamples)
    func parseSerializeParse(_ text: String) throws {
        let value = try parse(text)
        let serialized = JSONSerializer.bytes(value)
        #expect(try JSONParser().parse(serialized) == value)
        // Serializing is idempotent on compact text.
        #expect(JSONSerializer.bytes(try JSONParser().parse(serialized)) == serialized)
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let value = randomValue(depth: 0, using: &generator)
            #expect(try JSONParser().parse(JSONSerializer.bytes(value)) == value)
            var buffer = ByteBuffer()
            buffer.writeJSONValue(value)
            #expect(try JSONParser().parse(buffer) == value)
        }
    }

    private func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        let choice = generator.next() % (depth > 4 ? 4 : 6)
        switch choice {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2:
            if generator.next() % 2 == 0 {
                return .number(JSONNumber(Int64(bitPattern: generator.next())))
            }
            let double = Double(bitPattern: generator.next())
            return double.isFinite ? .number(JSONNumber(double)) : .null
        case 3:
            let scalars = (0..<(generator.next() % 8)).compactMap { _ in
                Unicode.Scalar(UInt32(generator.next() % 0x11_0000))
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 4:
            return .array((0..<(generator.next() % 4)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var object = JSONObject()
            for _ in 0..<(generator.next() % 4) {
                object.append(key: String(generator.next() % 5), value: randomValue(depth: depth + 1, using: &generator))
            }
            return .object(object)
        }
    }
}

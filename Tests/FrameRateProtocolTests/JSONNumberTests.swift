import FrameRateProtocol
import Testing

@Suite("JSONNumber")
struct JSONNumberTests {
    @Test(arguments: [
        ("0", 0), ("-0", 0), ("42", 42), ("-42", -42), ("1e2", 100), ("1E+2", 100), ("100e-2", 1),
        ("1.0", 1), ("100.000", 100), ("1.5e1", 15), ("0.0e5", 0), ("0e-999999999999999", 0),
        ("9223372036854775807", .max), ("-9223372036854775808", .min), ("922337203685477580.7e1", .max),
        ("-9.223372036854775808e18", .min),
    ] as [(String, Int64)])
    func exactIntegers(_ text: String, _ expected: Int64) throws {
        let number = try #require(JSONNumber(text: text))
        #expect(number.int64Value == expected)
        #expect(number.intValue == Int(expected))
    }

    @Test(arguments: [
        "1.5", "0.1", "1e-1", "9223372036854775808", "-9223372036854775809", "1e19", "1e400",
        "12345678901234567890", "1e999999999999999999999", "-1e-999999999999999999999",
    ])
    func notExactInt64(_ text: String) throws {
        #expect(try #require(JSONNumber(text: text)).int64Value == nil)
    }

    @Test func doubles() throws {
        #expect(JSONNumber(text: "1.50")?.doubleValue == 1.5)
        #expect(JSONNumber(text: "-2.5e-3")?.doubleValue == -0.0025)
        #expect(JSONNumber(text: "1e308")?.finiteDoubleValue == 1e308)
        #expect(JSONNumber(text: "1e309")?.finiteDoubleValue == nil)
        #expect(JSONNumber(text: "1e309")?.doubleValue == .infinity)
    }

    @Test func constructors() {
        #expect(JSONNumber(42).text == "42")
        #expect(JSONNumber(Int64.min).text == "-9223372036854775808")
        #expect(JSONNumber(UInt64.max).text == "18446744073709551615")
        #expect(JSONNumber(60.0).text == "60.0")
        #expect(JSONNumber(0.1).text == "0.1")
        #expect(JSONNumber(exactly: .nan) == nil)
        #expect(JSONNumber(exactly: .infinity) == nil)
        #expect(JSONNumber(exactly: -.infinity) == nil)
        #expect(JSONNumber(exactly: 59.94)?.text == "59.94")
    }

    @Test(arguments: [1e-5, 1e100, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1.0 / 3.0, -0.0, 123456789.123])
    func doubleTextIsValidJSONAndRoundTrips(_ value: Double) throws {
        let number = JSONNumber(value)
        #expect(JSONNumber(text: number.text) == number)
        #expect(number.doubleValue == value)
        #expect(try parse(number.text) == .number(number))
    }

    @Test(arguments: ["", " 1", "1 ", "+1", "01", ".5", "1.", "NaN", "-Infinity", "0x1", "1_000", "1,0", "\"1\""])
    func invalidText(_ text: String) {
        #expect(JSONNumber(text: text) == nil)
    }

    @Test func equalityIsTextual() {
        #expect(JSONNumber(text: "1") != JSONNumber(text: "1.0"))
        #expect(JSONNumber(text: "1.50") == JSONNumber(text: "1.50"))
        #expect(JSONNumber(text: "1.50")?.description == "1.50")
    }
}

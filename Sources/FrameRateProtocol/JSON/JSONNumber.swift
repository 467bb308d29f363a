/// A JSON number, stored as its exact text.
///
/// Keeping the text means an id such as `12345678901234567890` or `1.50` is echoed
/// byte-for-byte, and huge values such as `1e400` survive a round trip. Conversions to Swift
/// numbers are explicit: ``doubleValue``, ``finiteDoubleValue``, ``int64Value``.
///
/// Equality compares the text: `1`, `1.0` and `1e0` are three different `JSONNumber`s even
/// though their ``int64Value`` is the same.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text exactly as it appears in JSON, e.g. `-0.5e10`.
    public let text: String

    /// Wraps text already known to match the RFC 8259 number grammar.
    init(uncheckedText text: String) {
        self.text = text
    }

    /// Creates a number from its JSON text, or returns `nil` if `text` is not exactly one
    /// RFC 8259 number (no surrounding whitespace, no `+`, no leading zeros, no `NaN`).
    public init?(text: String) {
        guard case .number(let number)? = try? JSONParser().parse(text), number.text == text else {
            return nil
        }
        self = number
    }

    /// Creates an integer number.
    public init(_ value: Int) {
        self.text = String(value)
    }

    /// Creates an integer number.
    public init(_ value: Int64) {
        self.text = String(value)
    }

    /// Creates an integer number.
    public init(_ value: UInt64) {
        self.text = String(value)
    }

    /// Creates a number from a finite `Double`, written in its shortest round-tripping form
    /// (`60.0`, `1e-05`, `1e+100`).
    ///
    /// - Precondition: `value.isFinite`. JSON has no NaN or infinity; passing one is a
    ///   programming error. Use ``init(exactly:)`` for values that may not be finite.
    public init(_ value: Double) {
        precondition(value.isFinite, "JSON cannot represent \(value); use null or check isFinite first")
        self.text = value.description
    }

    /// Creates a number from a `Double`, or returns `nil` if the value is NaN or infinite.
    public init?(exactly value: Double) {
        guard value.isFinite else { return nil }
        self.text = value.description
    }

    /// The JSON text.
    public var description: String {
        self.text
    }

    /// The nearest `Double`. Magnitudes too large for a `Double` (such as `1e400` or a
    /// 400-digit integer) give an infinity; never NaN.
    public var doubleValue: Double {
        Double(self.text) ?? .nan
    }

    /// The nearest `Double`, or `nil` if the number is too large to be represented finitely.
    /// Use this wherever a field needs a finite number.
    public var finiteDoubleValue: Double? {
        let value = self.doubleValue
        return value.isFinite ? value : nil
    }

    /// The value as an `Int64` if it is mathematically an integer in `Int64` range, else `nil`.
    ///
    /// Exact decimal arithmetic is used, so `100`, `1e2`, `1.0e2` and `100.0` all give `100`,
    /// `-0` gives `0`, while `1.5`, `9223372036854775808` and `1e19` give `nil`.
    public var int64Value: Int64? {
        JSONNumber.exactInteger(self.text)
    }

    /// The value as an `Int` if it is mathematically an integer in `Int` range, else `nil`.
    public var intValue: Int? {
        self.int64Value.flatMap { Int(exactly: $0) }
    }
}

extension JSONNumber {
    /// Exponents are clamped to this magnitude while parsing; any integer in `Int64` range has
    /// at most 19 digits, so a larger exponent can only mean "not an integer" or "out of range".
    private static let exponentClamp = 1_000_000

    /// Decodes the number grammar `-?digits(.digits)?([eE][+-]?digits)?` exactly.
    private static func exactInteger(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index += 1 }
        var significand: [UInt8] = []
        while index < bytes.count, let digit = decimalDigit(bytes[index]) {
            significand.append(digit)
            index += 1
        }
        var exponent = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, let digit = decimalDigit(bytes[index]) {
                significand.append(digit)
                exponent -= 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentSign = 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentSign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
            }
            var written = 0
            while index < bytes.count, let digit = decimalDigit(bytes[index]) {
                written = min(written * 10 + Int(digit), exponentClamp)
                index += 1
            }
            exponent += exponentSign * written
        }
        guard let first = significand.firstIndex(where: { $0 != 0 }) else { return 0 }
        var end = significand.count
        while significand[end - 1] == 0 {
            end -= 1
            exponent += 1
        }
        guard exponent >= 0, end - first + exponent <= 19 else { return nil }
        // Accumulate negatively so that Int64.min is reachable.
        var value: Int64 = 0
        for digit in significand[first..<end] {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        for _ in 0..<exponent {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = shifted
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private static func decimalDigit(_ byte: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? byte &- UInt8(ascii: "0") : nil
    }
}

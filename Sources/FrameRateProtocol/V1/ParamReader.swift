import UntrustedText

/// Reads a method's `params` object field by field, turning every wrong type,
/// missing field or unknown field into a `-32602` error that names the field
/// by its path (e.g. `range.minimum`).
///
/// Errors quote a rejected value as it was sent, shortened and with invisible characters
/// named (``EchoedValue``): `1e400`, not `inf`; `<U+00A0 NO-BREAK SPACE>minimum`, not a blank.
public struct ParamReader {
    private let object: JSONObject
    private let path: String

    /// Wraps `params` (absent counts as `{}`), rejecting non-objects and any
    /// field not in `allowed` (`nil` accepts any field: clients reading the
    /// daemon's results tolerate fields a newer daemon adds).
    public init(_ params: JSONValue?, path: String = "", allowed: Set<String>?) throws(RPCError) {
        let label = path.isEmpty ? "params" : path
        switch params {
        case nil, .null?:
            self.object = JSONObject()
        case .object(let object)?:
            self.object = object
        case let other?:
            throw .invalidParams(field: path.isEmpty ? nil : path, "\(label) must be an object, got \(other.typeName)")
        }
        self.path = path
        guard let allowed else { return }
        for key in object.keys where !allowed.contains(key) {
            let shown = qualified(EchoedValue.text(key, limit: EchoedValue.nameLimit))
            throw .invalidParams(
                field: shown,
                "unknown field '\(shown)'; \(label) takes "
                    + (allowed.isEmpty ? "no fields" : allowed.sorted().joined(separator: ", "))
            )
        }
    }

    private func qualified(_ field: String) -> String { path.isEmpty ? field : "\(path).\(field)" }

    private func value(_ field: String) -> JSONValue? {
        guard let value = object[field], !value.isNull else { return nil }
        return value
    }

    private func wrongType(_ field: String, expected: String, got value: JSONValue) -> RPCError {
        .invalidParams(field: qualified(field), "\(qualified(field)) must be \(expected), got \(value.typeName)")
    }

    private func missing(_ field: String, expected: String) -> RPCError {
        .invalidParams(field: qualified(field), "missing required field \(qualified(field)) (\(expected))")
    }

    /// A finite number, or `nil` when absent or `null`.
    public func number(_ field: String) throws(RPCError) -> Double? {
        guard let value = value(field) else { return nil }
        guard let number = value.numberValue else { throw wrongType(field, expected: "a number", got: value) }
        guard let double = number.finiteDoubleValue else {
            throw .invalidParams(field: qualified(field), "\(qualified(field)) is out of range: \(EchoedValue.number(number.text))")
        }
        return double
    }

    /// How a number field was sent, for an error message that quotes it: its JSON text,
    /// shortened (``EchoedValue/number(_:limit:)``), or `nil` when the field is not a number.
    public func quotedNumber(_ field: String) -> String? {
        value(field)?.numberValue.map { EchoedValue.number($0.text) }
    }

    /// A required finite number.
    public func requiredNumber(_ field: String) throws(RPCError) -> Double {
        guard let number = try number(field) else { throw missing(field, expected: "a number") }
        return number
    }

    /// A whole number in `minimum...maximum`, or `nil` when absent or `null`.
    public func integer(_ field: String, minimum: Int64 = 0, maximum: Int64 = .max) throws(RPCError) -> Int64? {
        guard let value = value(field) else { return nil }
        guard let number = value.numberValue else { throw wrongType(field, expected: "an integer", got: value) }
        guard let integer = number.int64Value, integer >= minimum, integer <= maximum else {
            let bounds = maximum == .max ? "of at least \(minimum)" : "in \(minimum)...\(maximum)"
            throw .invalidParams(
                field: qualified(field), "\(qualified(field)) must be an integer \(bounds), got \(EchoedValue.number(number.text))"
            )
        }
        return integer
    }

    /// A whole number that fits `Integer` and is at least `minimum`, or `nil` when absent or
    /// `null`: the checked way to read a field into a narrower type (`Int32` pids, `UInt32` uids).
    public func integer<Integer: FixedWidthInteger>(_ field: String, as type: Integer.Type, minimum: Int64 = 0) throws(RPCError) -> Integer? {
        let maximum = Int64(exactly: Integer.max) ?? .max
        guard let integer = try integer(field, minimum: minimum, maximum: maximum) else { return nil }
        // In range by the bounds just checked (minimum is at least Int64's, Integer.max is the maximum).
        guard let converted = Integer(exactly: integer) else {
            throw .invalidParams(field: qualified(field), "\(qualified(field)) does not fit \(Integer.self)")
        }
        return converted
    }

    /// A required whole number `>= minimum`.
    public func requiredInteger(_ field: String, minimum: Int64 = 0) throws(RPCError) -> Int64 {
        guard let integer = try integer(field, minimum: minimum) else { throw missing(field, expected: "an integer") }
        return integer
    }

    /// A boolean, or `nil` when absent or `null`.
    public func bool(_ field: String) throws(RPCError) -> Bool? {
        guard let value = value(field) else { return nil }
        guard let bool = value.boolValue else { throw wrongType(field, expected: "true or false", got: value) }
        return bool
    }

    /// A string, or `nil` when absent or `null`.
    public func string(_ field: String, maximumLength: Int = 256) throws(RPCError) -> String? {
        guard let value = value(field) else { return nil }
        guard let string = value.stringValue else { throw wrongType(field, expected: "a string", got: value) }
        guard string.utf8.count <= maximumLength else {
            throw .invalidParams(field: qualified(field), "\(qualified(field)) is longer than \(maximumLength) bytes")
        }
        return string
    }

    /// A nested object's reader, or `nil` when absent or `null`.
    public func object(_ field: String, allowed: Set<String>?) throws(RPCError) -> ParamReader? {
        guard let value = value(field) else { return nil }
        return try ParamReader(value, path: qualified(field), allowed: allowed)
    }

    /// An array, or `nil` when absent or `null`.
    public func array(_ field: String) throws(RPCError) -> [JSONValue]? {
        guard let value = value(field) else { return nil }
        guard let array = value.arrayValue else { throw wrongType(field, expected: "an array", got: value) }
        return array
    }

    /// The path of `field` as errors name it.
    public func fieldPath(_ field: String) -> String { qualified(field) }
}

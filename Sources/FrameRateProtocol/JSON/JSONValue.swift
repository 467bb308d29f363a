/// A JSON document, as defined by RFC 8259.
///
/// Numbers keep their exact source text (see ``JSONNumber``) and objects keep their member
/// order (see ``JSONObject``), so a value parsed from the wire and serialized again is
/// byte-for-byte the compact form of what was received. Equality is structural and exact:
/// `1` and `1.0` are different numbers, and `{"a":1,"b":2}` differs from `{"b":2,"a":1}`.
///
/// Values produced by ``JSONParser`` are nested at most ``JSONParser/maximumDepth`` levels
/// deep. Serialization is iterative, but equality, hashing and deallocation recurse, so do not
/// build values nested thousands of levels deep by hand.
public enum JSONValue: Sendable, Hashable {
    /// The literal `null`.
    case null
    /// The literal `true` or `false`.
    case bool(Bool)
    /// A number, with its exact text.
    case number(JSONNumber)
    /// A string (always valid Unicode).
    case string(String)
    /// An array of values.
    case array([JSONValue])
    /// An object: an ordered list of members.
    case object(JSONObject)
}

extension JSONValue {
    /// The JSON type name of this value: `null`, `boolean`, `number`, `string`, `array` or `object`.
    ///
    /// Meant for error messages such as "params.hz must be a number, not a string".
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Whether this value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The Boolean, if this value is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number, if this value is a number.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, if this value is a number (may be infinite for huge numbers
    /// such as `1e400`; see ``JSONNumber/finiteDoubleValue``).
    public var doubleValue: Double? {
        self.numberValue?.doubleValue
    }

    /// The number as an `Int64`, if this value is a number whose value is exactly an integer in
    /// `Int64` range (see ``JSONNumber/int64Value``).
    public var int64Value: Int64? {
        self.numberValue?.int64Value
    }

    /// The string, if this value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements, if this value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this value is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member named `key` if this value is an object that has one (the last one wins when
    /// the key is duplicated), else `nil`.
    public subscript(key: String) -> JSONValue? {
        self.objectValue?[key]
    }

    /// The element at `index` if this value is an array and `index` is in range, else `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

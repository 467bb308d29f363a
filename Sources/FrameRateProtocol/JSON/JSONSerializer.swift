public import NIOCore

/// Writes ``JSONValue``s as compact JSON: no whitespace, members in order, numbers as their
/// exact text, strings escaped minimally.
///
/// String escaping: `"` and `\` are backslash-escaped, control characters use the short
/// forms `\b \f \n \r \t` where they exist and `\u00XX` (lower-case hex) otherwise; all other
/// characters, including non-ASCII ones and `/`, are written as raw UTF-8. The output of
/// ``JSONParser`` on serialized bytes is the original value.
///
/// Serialization is iterative, so any nesting depth is safe.
public enum JSONSerializer {
    /// Appends the compact JSON for `value` to `buffer`.
    public static func serialize(_ value: JSONValue, into buffer: inout ByteBuffer) {
        write(value, to: &buffer)
    }

    /// Appends the compact JSON for `object`, except that the value of its member `key` is
    /// written by `writeValue` in place of the object's own (a placeholder). For splicing
    /// parts encoded elsewhere (kept from an earlier encoding) into a document whose other
    /// members are built as usual; every member keeps its place.
    /// - Parameter writeValue: appends exactly one compact JSON value.
    public static func serialize(
        _ object: JSONObject, into buffer: inout ByteBuffer, replacing key: String, with writeValue: (inout ByteBuffer) -> Void
    ) {
        buffer.write(byte: ASCII.openBrace)
        for (index, member) in object.members.enumerated() {
            if index > 0 { buffer.write(byte: ASCII.comma) }
            writeString(member.key, to: &buffer)
            buffer.write(byte: ASCII.colon)
            if member.key == key {
                writeValue(&buffer)
            } else {
                write(member.value, to: &buffer)
            }
        }
        buffer.write(byte: ASCII.closeBrace)
    }

    /// Appends `elements` as a compact JSON array, each written by `writeElement`.
    /// - Parameter writeElement: appends exactly one compact JSON value.
    public static func serializeArray<Elements: Sequence>(
        _ elements: Elements, into buffer: inout ByteBuffer, writeElement: (Elements.Element, inout ByteBuffer) -> Void
    ) {
        buffer.write(byte: ASCII.openBracket)
        for (index, element) in elements.enumerated() {
            if index > 0 { buffer.write(byte: ASCII.comma) }
            writeElement(element, &buffer)
        }
        buffer.write(byte: ASCII.closeBracket)
    }

    /// The compact JSON for `value`, as bytes.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var sink = ArraySink()
        write(value, to: &sink)
        return sink.bytes
    }

    /// The compact JSON for `value`, as a string.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// An array or object whose members are being written.
    private struct Cursor {
        var elements: [JSONValue]
        var members: [JSONObject.Member]
        var isObject: Bool
        var next = 0
    }

    private static func write(_ root: JSONValue, to sink: inout some JSONOutputSink) {
        var stack: [Cursor] = []
        writeValue(root, to: &sink, stack: &stack)
        while !stack.isEmpty {
            let top = stack.count - 1
            let index = stack[top].next
            let count = stack[top].isObject ? stack[top].members.count : stack[top].elements.count
            guard index < count else {
                sink.write(byte: stack[top].isObject ? ASCII.closeBrace : ASCII.closeBracket)
                stack.removeLast()
                continue
            }
            stack[top].next += 1
            if index > 0 { sink.write(byte: ASCII.comma) }
            let value: JSONValue
            if stack[top].isObject {
                let member = stack[top].members[index]
                writeString(member.key, to: &sink)
                sink.write(byte: ASCII.colon)
                value = member.value
            } else {
                value = stack[top].elements[index]
            }
            writeValue(value, to: &sink, stack: &stack)
        }
    }

    /// Writes a scalar completely, or the opening bracket of a container (pushing a cursor).
    private static func writeValue(_ value: JSONValue, to sink: inout some JSONOutputSink, stack: inout [Cursor]) {
        switch value {
        case .null:
            sink.write(ascii: "null")
        case .bool(let flag):
            sink.write(ascii: flag ? "true" : "false")
        case .number(let number):
            var text = number.text
            text.withUTF8 { sink.write(bytes: UnsafeRawBufferPointer($0)) }
        case .string(let string):
            writeString(string, to: &sink)
        case .array(let elements):
            sink.write(byte: ASCII.openBracket)
            stack.append(Cursor(elements: elements, members: [], isObject: false))
        case .object(let object):
            sink.write(byte: ASCII.openBrace)
            stack.append(Cursor(elements: [], members: object.members, isObject: true))
        }
    }

    private static func writeString(_ string: String, to sink: inout some JSONOutputSink) {
        sink.write(byte: ASCII.quote)
        var string = string
        string.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < ASCII.space || byte == ASCII.quote || byte == ASCII.backslash else { continue }
                sink.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case ASCII.quote: sink.write(ascii: "\\\"")
                case ASCII.backslash: sink.write(ascii: "\\\\")
                case 0x08: sink.write(ascii: "\\b")
                case 0x0C: sink.write(ascii: "\\f")
                case ASCII.newline: sink.write(ascii: "\\n")
                case ASCII.carriageReturn: sink.write(ascii: "\\r")
                case ASCII.tab: sink.write(ascii: "\\t")
                default:
                    sink.write(ascii: "\\u00")
                    sink.write(byte: ASCII.hexDigits[Int(byte >> 4)])
                    sink.write(byte: ASCII.hexDigits[Int(byte & 0x0F)])
                }
            }
            sink.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        sink.write(byte: ASCII.quote)
    }
}

extension JSONValue {
    /// The compact JSON text of this value (see ``JSONSerializer``).
    public var jsonString: String {
        JSONSerializer.string(self)
    }
}

extension ByteBuffer {
    /// Appends the compact JSON for `value` (see ``JSONSerializer``).
    public mutating func writeJSONValue(_ value: JSONValue) {
        JSONSerializer.serialize(value, into: &self)
    }
}

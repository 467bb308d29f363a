import NIOCore

/// Where ``JSONSerializer`` writes bytes; lets one serializer target both `ByteBuffer`
/// and `[UInt8]` without intermediate copies.
protocol JSONOutputSink {
    mutating func write(byte: UInt8)
    mutating func write(bytes: UnsafeRawBufferPointer)
}

extension JSONOutputSink {
    mutating func write(ascii text: StaticString) {
        self.write(bytes: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

/// Appends to the `ByteBuffer` itself.
extension ByteBuffer: JSONOutputSink {
    mutating func write(byte: UInt8) {
        self.writeInteger(byte)
    }

    mutating func write(bytes: UnsafeRawBufferPointer) {
        self.writeBytes(bytes)
    }
}

/// Appends to a byte array.
struct ArraySink: JSONOutputSink {
    var bytes: [UInt8] = []

    mutating func write(byte: UInt8) {
        self.bytes.append(byte)
    }

    mutating func write(bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
    }
}

/// The protobuf wire format, for the few messages of a Perfetto trace framectl writes:
/// varints, 64-bit fixed values, doubles and length-delimited fields (strings, nested
/// messages). Fields are written in call order; a message's bytes are its fields.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func tag(_ field: Int, wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// A varint field: uint32, uint64, enum, bool.
    mutating func uint(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 0)
        varint(value)
    }

    /// An int64 field (two's complement varint).
    mutating func int(_ field: Int, _ value: Int64) {
        uint(field, UInt64(bitPattern: value))
    }

    /// A bool field.
    mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    /// A fixed64 field, little-endian.
    mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A double field.
    mutating func double(_ field: Int, _ value: Double) {
        tag(field, wireType: 1)
        let bits = value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    /// A length-delimited field of raw bytes (a nested message's).
    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        tag(field, wireType: 2)
        varint(UInt64(value.count))
        bytes += value
    }

    /// A string field (UTF-8).
    mutating func string(_ field: Int, _ value: String) { bytes(field, Array(value.utf8)) }

    /// A nested message field, built by `body`.
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        body(&nested)
        bytes(field, nested.bytes)
    }
}

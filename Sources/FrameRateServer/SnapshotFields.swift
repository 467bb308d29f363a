import FrameRateProtocol

/// Typed, strict access to one object of a ``HandoverSnapshot``'s JSON: every accessor
/// names the full path of a missing or ill-typed field.
struct SnapshotFields {
    let value: JSONValue
    let prefix: String

    init(_ value: JSONValue, path prefix: String) {
        self.value = value
        self.prefix = prefix
    }

    func path(_ field: String) -> String { prefix.isEmpty ? field : "\(prefix).\(field)" }

    private func field(_ name: String) throws(HandoverSnapshotError) -> JSONValue {
        guard let member = value[name] else { throw .malformed(field: path(name)) }
        return member
    }

    func int64(_ name: String) throws(HandoverSnapshotError) -> Int64 {
        guard let number = try field(name).int64Value else { throw .malformed(field: path(name)) }
        return number
    }

    func uint64(_ name: String) throws(HandoverSnapshotError) -> UInt64 {
        try SnapshotFields(try field(name), path: path(name)).asUInt64()
    }

    /// A non-negative integer, or `nil` when the field is absent or `null` (a field newer
    /// than the format: a snapshot without it still reads).
    func optionalUInt64(_ name: String) throws(HandoverSnapshotError) -> UInt64? {
        guard let member = value[name], !member.isNull else { return nil }
        return try SnapshotFields(member, path: path(name)).asUInt64()
    }

    /// This value as a non-negative integer (exact text, up to `UInt64.max`).
    func asUInt64() throws(HandoverSnapshotError) -> UInt64 {
        guard let text = value.numberValue?.text, let number = UInt64(text) else { throw .malformed(field: prefix) }
        return number
    }

    func double(_ name: String) throws(HandoverSnapshotError) -> Double {
        guard let number = try field(name).numberValue?.finiteDoubleValue else { throw .malformed(field: path(name)) }
        return number
    }

    func bool(_ name: String) throws(HandoverSnapshotError) -> Bool {
        guard let flag = try field(name).boolValue else { throw .malformed(field: path(name)) }
        return flag
    }

    func string(_ name: String) throws(HandoverSnapshotError) -> String {
        guard let text = try field(name).stringValue else { throw .malformed(field: path(name)) }
        return text
    }

    func optionalString(_ name: String) throws(HandoverSnapshotError) -> String? {
        let member = try field(name)
        if member.isNull { return nil }
        guard let text = member.stringValue else { throw .malformed(field: path(name)) }
        return text
    }

    func array(_ name: String) throws(HandoverSnapshotError) -> [SnapshotFields] {
        guard let items = try field(name).arrayValue else { throw .malformed(field: path(name)) }
        return items.enumerated().map { SnapshotFields($1, path: "\(path(name))[\($0)]") }
    }

    /// A `[seconds, attoseconds]` pair.
    func duration(_ name: String) throws(HandoverSnapshotError) -> Duration {
        let member = try field(name)
        guard let pair = member.arrayValue, pair.count == 2, let seconds = pair[0].int64Value, let attoseconds = pair[1].int64Value,
            (0..<1_000_000_000_000_000_000).contains(attoseconds)
        else { throw .malformed(field: path(name)) }
        return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    }

    func optionalDuration(_ name: String) throws(HandoverSnapshotError) -> Duration? {
        if try field(name).isNull { return nil }
        return try duration(name)
    }
}

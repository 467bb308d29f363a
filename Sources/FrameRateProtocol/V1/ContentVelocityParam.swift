/// Reads the optional `contentVelocity` param of `DisplayLink/FrameDone` and `/Present`:
/// points per second, a finite number `>= 0`; `nil` when absent or `null`.
/// - Throws: `INVALID_ARGUMENT` (`-32602`) naming the field and the bound.
func readContentVelocity(_ reader: ParamReader) throws(RPCError) -> Double? {
    guard let velocity = try reader.number("contentVelocity") else { return nil }
    guard velocity.isFinite, velocity >= 0 else {
        throw .invalidParams(
            field: "contentVelocity",
            "contentVelocity must be a finite number of points per second >= 0, got \(reader.quotedNumber("contentVelocity") ?? "?")"
        )
    }
    return velocity
}

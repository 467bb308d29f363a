import FrameRateProtocol

/// Decodes a daemon's result with a typed parser from FrameRateProtocol; a
/// result that does not parse is a protocol violation.
enum ResultDecoding {
    /// `body`'s value, or ``FrameRateClientError/protocolViolation(_:)`` naming `method`.
    static func decode<Value>(
        _ method: V1Method,
        _ body: () throws(RPCError) -> Value
    ) throws(FrameRateClientError) -> Value {
        do {
            return try body()
        } catch {
            throw .protocolViolation("an unreadable \(method.method) result: \(error.message)")
        }
    }
}

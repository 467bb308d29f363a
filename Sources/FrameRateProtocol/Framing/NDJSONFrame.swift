public import NIOCore

/// What ``NDJSONLineDecoder`` produces from the byte stream.
public enum NDJSONFrame: Sendable, Hashable {
    /// One line's bytes, without the `\n` and without one trailing `\r`. Never empty and never
    /// only whitespace.
    case line(ByteBuffer)
    /// A line longer than `limit` bytes was received and discarded. The server answers it
    /// with -32600 and id `null`, then closes the connection.
    case oversized(limit: Int)
}

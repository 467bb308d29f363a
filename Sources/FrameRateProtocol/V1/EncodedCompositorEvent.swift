public import NIOCore

/// A ``CompositorEvent`` serialized once for every watch that sees it alike.
///
/// Each watch's `framerate.v1.Compositor/Event` line differs from another's only in its
/// `watch` id, while the rest (a link's whole state, a decision with its reason) is most
/// of the line. Serializing the event once and copying its bytes per watch takes the
/// encoder out of the per-watch cost: with 64 watches, one `DisplayLink/Update` spent
/// about 85 % of its control-loop time serializing the same link state 64 times
/// (`docs/performance.md`, "Watch events are encoded once").
///
/// ``writeLine(watch:into:)`` writes exactly the bytes of
/// `JSONRPCOutboundMessage.notification(method: V1Method.event.rawValue, params: event.params(watch:))`
/// written as a line; `EncodedCompositorEventTests` holds the two to each other for
/// every kind of event.
public struct EncodedCompositorEvent: Sendable {
    /// The params' members after `watch`, and the params' closing brace: `"kind":…}`.
    private let fields: ByteBuffer

    /// Serializes `event`'s fields (``CompositorEvent/fields``) once.
    public init(_ event: CompositorEvent, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        var buffer = allocator.buffer(capacity: 512)
        buffer.writeJSONValue(.object(event.fields))
        // An object is written `{` members `}`; `kind` is always a member, so after the
        // brace come the members and the closing brace.
        buffer.moveReaderIndex(forwardBy: 1)
        fields = buffer
    }

    /// An upper bound on one line's length, bytes (to size a buffer for several).
    public var lineLengthBound: Int { fields.readableBytes + Self.headBound }

    /// Appends the event's line for watch `watch`.
    public func writeLine(watch: UInt64, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(#"{"jsonrpc":"2.0","method":"#)
        buffer.writeJSONValue(.string(V1Method.event.rawValue))
        buffer.writeStaticString(#","params":{"watch":"#)
        buffer.writeJSONValue(JSONValue(watch))
        buffer.writeInteger(UInt8(ascii: ","))
        buffer.writeImmutableBuffer(fields)
        buffer.writeInteger(UInt8(ascii: "}"))
        buffer.writeInteger(ASCII.newline)
    }

    /// The envelope around the fields, with the longest `watch` id (20 digits), bytes.
    private static let headBound = 128
}

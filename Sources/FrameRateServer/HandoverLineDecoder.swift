import FrameRateProtocol
import NIOCore

/// What a connection's decoder held when the daemon handed the connection over: the
/// bytes read from the socket that form no complete line yet. Confined to the control loop.
final class HandoverInput {
    /// Set when the handover begins: the decoder then keeps every byte instead of decoding.
    var isHandingOver = false
    /// The bytes kept.
    var leftover: [UInt8] = []
}

/// ``NDJSONLineDecoder`` with a handover mode: while ``HandoverInput/isHandingOver`` is
/// set, nothing is decoded and every buffered byte goes to ``HandoverInput/leftover``
/// (when the decoder is removed, the partial line is kept, not delivered as a last line).
struct HandoverLineDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = NDJSONFrame

    private var lines: NDJSONLineDecoder
    private let input: HandoverInput

    init(maximumLineLength: Int, input: HandoverInput) {
        self.lines = NDJSONLineDecoder(maximumLineLength: maximumLineLength)
        self.input = input
    }

    mutating func decode(buffer: inout ByteBuffer) throws -> NDJSONFrame? {
        if input.isHandingOver {
            keep(&buffer)
            return nil
        }
        return try lines.decode(buffer: &buffer)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> NDJSONFrame? {
        if input.isHandingOver {
            keep(&buffer)
            return nil
        }
        return try lines.decodeLast(buffer: &buffer, seenEOF: seenEOF)
    }

    private func keep(_ buffer: inout ByteBuffer) {
        if let bytes = buffer.readBytes(length: buffer.readableBytes) { input.leftover += bytes }
    }
}

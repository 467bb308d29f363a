// Fuzz target: the NDJSON framer (NDJSONLineDecoder) and the JSON parser (JSONParser).
//
// Input layout: byte 0 picks the line limit (1...64 bytes, or the 1 MiB default), byte 1 the
// chunk size the stream is fed in; the rest is the byte stream. Invariants:
// - framing does not depend on how the stream is chunked (one chunk == byte-size chunks);
// - every line is non-empty, not only whitespace, holds no `\n`, and fits the limit;
// - a parsed line serializes to JSON that parses back to the same value and re-serializes
//   to the same bytes (the serializer's output is canonical).
import FrameRateProtocol
import FuzzSupport
import NIOCore

/// The frames of `stream` fed to a decoder in chunks of `chunkSize` bytes, then EOF.
func frames(of stream: [UInt8], chunkSize: Int, limit: Int) -> [NDJSONFrame] {
    var decoder = NDJSONLineDecoder(maximumLineLength: limit)
    var buffer = ByteBuffer()
    var frames: [NDJSONFrame] = []
    var offset = 0
    repeat {
        let end = min(offset + chunkSize, stream.count)
        buffer.writeBytes(stream[offset..<end])
        offset = end
        while let frame = try! decoder.decode(buffer: &buffer) { frames.append(frame) }
        buffer.discardReadBytes()
    } while offset < stream.count
    while let frame = try! decoder.decodeLast(buffer: &buffer, seenEOF: true) { frames.append(frame) }
    return frames
}

func isJSONWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

runFuzzer { data, size in
    let input = bytes(data, size)
    guard input.count >= 2 else { return 0 }
    let limit = input[0] == 0 ? NDJSONLineDecoder.defaultMaximumLineLength : Int(input[0] % 64) + 1
    let chunkSize = Int(input[1] % 17) + 1
    let stream = Array(input[2...])

    let whole = frames(of: stream, chunkSize: max(stream.count, 1), limit: limit)
    let chunked = frames(of: stream, chunkSize: chunkSize, limit: limit)
    check(whole == chunked, "framing depends on chunking (chunk size \(chunkSize))")

    for frame in whole {
        guard case .line(let line) = frame else { continue }
        let lineBytes = Array(line.readableBytesView)
        check(!lineBytes.isEmpty && !lineBytes.allSatisfy(isJSONWhitespace), "blank line delivered")
        check(!lineBytes.contains(0x0A), "line holds a newline")
        check(lineBytes.count <= limit, "line of \(lineBytes.count) bytes passes the \(limit)-byte limit")

        guard let value = try? JSONParser().parse(line) else { continue }
        check((try? JSONParser().parse(lineBytes)) == value, "ByteBuffer and byte-array parses differ")
        let serialized = JSONSerializer.bytes(value)
        guard let reparsed = try? JSONParser().parse(serialized) else {
            fatalError("invariant violated: serializer output does not parse: \(String(decoding: serialized, as: UTF8.self))")
        }
        check(reparsed == value, "round trip changed the value")
        check(JSONSerializer.bytes(reparsed) == serialized, "serialization is not canonical")
    }
    return 0
}

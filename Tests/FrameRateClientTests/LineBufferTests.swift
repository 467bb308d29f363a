#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import NIOCore
import Testing

@testable import FrameRateClient

/// Every line `buffer` holds now, as text, consumed.
private func drain(_ buffer: inout LineBuffer) -> [String] {
    var lines: [String] = []
    buffer.consumeLines { line in
        lines.append(String(decoding: line, as: UTF8.self))
        return .next
    }
    return lines
}

@Suite("LineBuffer: the low-level layer's line splitter")
struct LineBufferTests {
    @Test("lines split across appends come out whole, in order; empty lines and a \\r before \\n are dropped")
    func splitAcrossAppends() throws {
        var buffer = LineBuffer(capacity: 16)
        try buffer.append(Array("ab".utf8))
        #expect(drain(&buffer).isEmpty)
        try buffer.append(Array("c\nde".utf8))
        #expect(drain(&buffer) == ["abc"])
        try buffer.append(Array("f\n\n\r\nxyz\r\n".utf8))
        #expect(drain(&buffer) == ["def", "xyz"])
        #expect(buffer.bufferedByteCount == 0)
    }

    @Test("stop leaves the following lines buffered for the next call")
    func stopKeepsTheRest() throws {
        var buffer = LineBuffer(capacity: 64)
        try buffer.append(Array("one\ntwo\nthree\npart".utf8))
        var first: [String] = []
        buffer.consumeLines { line in
            first.append(String(decoding: line, as: UTF8.self))
            return .stop
        }
        #expect(first == ["one"])
        #expect(drain(&buffer) == ["two", "three"])
        #expect(buffer.takeRemainder() == Array("part".utf8))
        #expect(buffer.bufferedByteCount == 0)
    }

    @Test("a line longer than the capacity grows the storage; one byte over the maximum is refused")
    func growthAndLimit() throws {
        var buffer = LineBuffer(capacity: 8, maximumLineLength: 40)
        let exact = String(repeating: "a", count: 40)
        try buffer.append(Array((exact + "\n").utf8))
        #expect(buffer.capacity == 41)
        #expect(drain(&buffer) == [exact])

        var over = LineBuffer(capacity: 8, maximumLineLength: 40)
        #expect(throws: ClientSocketError.lineTooLong(limit: 40)) {
            try over.append(Array(String(repeating: "b", count: 42).utf8))
        }
        #expect(over.capacity == 41)
        #expect(over.bufferedByteCount == 41)
    }

    @Test("the unfinished tail moves to the front, so a small buffer carries any number of lines")
    func tailIsCompacted() throws {
        var buffer = LineBuffer(capacity: 10)
        var lines: [String] = []
        for index in 0..<100 {
            try buffer.append(Array("line\(index)\n".utf8))
            lines += drain(&buffer)
        }
        #expect(lines == (0..<100).map { "line\($0)" })
        #expect(buffer.capacity <= 20)
    }

    @Test("Tick lines written by TickLineEncoder in odd-sized chunks on a socketpair are read back exactly")
    func ticksOverASocketpair() throws {
        let (reader, writer) = try socketPair()
        let shared = TickLineEncoder.sharedFields(
            timestamp: 1_234_567_890_123, targetTimestamp: 1_234_576_223_456, duration: 8_333_333, refreshRate: 120, callbackRate: 60,
            allocator: ByteBufferAllocator()
        )
        var wire = ByteBuffer()
        for sequence in 0..<200 as Range<UInt64> {
            TickLineEncoder.write(link: sequence % 7 + 1, sequence: sequence, skipped: sequence % 3, shared: shared, into: &wire)
        }
        let bytes = Array(wire.readableBytesView)
        // At most 320 bytes a read, about one and a fifth lines (each carries
        // targetPresentationTimestamp): reads end inside lines.
        var buffer = LineBuffer(capacity: 320)
        var ticks: [TickLineScanner.Fields] = []
        var others = 0
        /// Reads what is there now, until `until` comes back.
        func readAll(until stop: ReadOutcome) throws {
            while try reader.read(into: &buffer) != stop {
                buffer.consumeLines { line in
                    if let tick = TickLineScanner.scan(line) { ticks.append(tick) } else { others += 1 }
                    return .next
                }
            }
        }
        // Odd-sized chunks, each read back at once (small sends would fill the socket buffer).
        try reader.setNonBlocking(true)
        var offset = 0
        var chunk = 1
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try bytes[offset..<end].withUnsafeBytes { try writer.send($0) }
            try readAll(until: .wouldBlock)
            offset = end
            chunk = chunk % 97 + 13
        }
        writer.close()
        try readAll(until: .endOfStream)
        #expect(others == 0)
        #expect(buffer.bufferedByteCount == 0)
        #expect(ticks.count == 200)
        #expect(buffer.capacity == 320)
        for (sequence, tick) in ticks.enumerated() {
            let expected = TickLineScanner.Fields(
                link: UInt64(sequence % 7 + 1), sequence: UInt64(sequence), timestampNanoseconds: 1_234_567_890_123, skipped: UInt64(sequence % 3)
            )
            #expect(tick == expected)
        }
    }

    @Test("a non-blocking read with nothing there says so, and buffers nothing")
    func wouldBlock() throws {
        let (reader, peer) = try socketPair()
        try reader.setNonBlocking(true)
        var buffer = LineBuffer()
        #expect(try reader.read(into: &buffer) == .wouldBlock)
        #expect(buffer.bufferedByteCount == 0)
        #expect(try reader.waitUntilReadable(deadline: MonotonicClock.nowNanoseconds) == false)
        peer.close()
        #expect(try reader.waitUntilReadable(deadline: MonotonicClock.nowNanoseconds) == true)
        #expect(try reader.read(into: &buffer) == .endOfStream)
    }
}

/// A connected pair of Unix stream sockets, each owned by a ``ClientSocket``.
func socketPair() throws -> (ClientSocket, ClientSocket) {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw ClientSocketError.system(call: "socketpair", errno: errno)
    }
    return (ClientSocket(adopting: fds[0]), ClientSocket(adopting: fds[1]))
}

extension ClientSocket {
    /// Sends `text` whole (test peers write the daemon's side with it).
    func send(_ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try send($0) }
    }
}

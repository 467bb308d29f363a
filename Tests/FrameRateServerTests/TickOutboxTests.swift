import FrameRatePosix
@testable import FrameRateServer
import FrameRateProtocol
import NIOCore
import Testing

/// `TickOutbox` over real socket pairs: a batch larger than one chunk of lines still gives
/// every connection its own lines, whole, in order, each connection's in one piece.
@Suite struct TickOutboxTests {
    @Test(arguments: BatchSender.Path.allCases)
    func aBatchOfSeveralChunksReachesEveryConnectionWithItsOwnLines(path: BatchSender.Path) throws {
        let connections = 120
        let sockets = try (0..<connections).map { _ in try SystemCall.socketPair() }
        let writers = sockets.map { SocketWriter(destination: .socket($0.0), highWater: 1 << 20) }
        defer {
            for writer in writers { writer.close() }
            for socket in sockets { SystemCall.close(socket.1) }
        }
        let fields = TickLineEncoder.sharedFields(
            timestamp: 2_000_000_000, targetTimestamp: 2_008_333_333, duration: 8_333_333, refreshRate: 120,
            callbackRate: 120, allocator: ByteBufferAllocator()
        )
        // Two links per connection, interleaved as a display's report lists them.
        var deliveries: [TickEngine.Delivery] = []
        for round in 0..<2 {
            for (slot, writer) in writers.enumerated() {
                deliveries.append(
                    TickEngine.Delivery(
                        link: UInt64(slot * 2 + round + 1), sequence: 9, skipped: 0, writer: .passUnretained(writer),
                        connection: UInt32(slot), fields: 0
                    ))
            }
        }
        let batch = TickEngine.Batch(deliveries: deliveries, fields: [fields])
        var outbox = TickOutbox(path: path)
        outbox.send(batch, number: 1)
        // More than one chunk of lines went out.
        #expect(connections * 2 * 200 > TickOutbox.chunkBytes)
        for (slot, socket) in sockets.enumerated() {
            var chunk = [UInt8](repeating: 0, count: 8192)
            let count = chunk.withUnsafeMutableBytes { SystemCall.read(socket.1, into: $0) } ?? 0
            let lines = chunk[..<max(0, count)].split(separator: UInt8(ascii: "\n"))
            #expect(lines.count == 2)
            #expect(chunk[max(0, count - 1)] == UInt8(ascii: "\n"))
            let links = lines.compactMap { line in Array(line).withUnsafeBytes { TickLineScanner.scan($0)?.link } }
            #expect(links == [UInt64(slot * 2 + 1), UInt64(slot * 2 + 2)])
        }
        // A second vsync's batch is gathered afresh (the per-slot chains of batch 1 are not reused).
        outbox.send(batch, number: 2)
        var chunk = [UInt8](repeating: 0, count: 8192)
        let count = chunk.withUnsafeMutableBytes { SystemCall.read(sockets[7].1, into: $0) } ?? 0
        #expect(chunk[..<max(0, count)].split(separator: UInt8(ascii: "\n")).count == 2)
    }
}

import FrameRateModel
import FrameRatePosix
@testable import FrameRateServer
import FrameRateProtocol
import NIOCore
import Synchronization
import Testing

/// `FanOutHelper` over a real socket pair: its shard's ticks wait for its thread, or,
/// when that thread could not be started, go out on the thread that submits them.
@Suite struct FanOutHelperTests {
    /// One connection's writer on a socket pair and a one-tick batch for it.
    struct Connection {
        let reading: Int32
        let writer: SocketWriter
        let batch: TickEngine.Batch

        init() throws {
            let (writing, reading) = try SystemCall.socketPair()
            self.reading = reading
            writer = SocketWriter(destination: .socket(writing), highWater: 1 << 20)
            let fields = TickLineEncoder.sharedFields(
                timestamp: 2_000_000_000, targetTimestamp: 2_008_333_333, duration: 8_333_333, refreshRate: 120,
                callbackRate: 120, allocator: ByteBufferAllocator()
            )
            let delivery = TickEngine.Delivery(
                link: 7, sequence: 41, skipped: 0, writer: .passUnretained(writer), owner: OwnerID(rawValue: 1 << 32 | 1), fields: 0
            )
            batch = TickEngine.Batch(deliveries: [delivery], fields: [fields])
        }

        /// What one read takes now, without waiting (a tick line is sent whole, in one send).
        func readable() -> [UInt8] {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { SystemCall.read(reading, into: $0) } ?? 0
            return Array(chunk[..<max(0, count)])
        }

        func close() {
            writer.close()
            SystemCall.close(reading)
        }
    }

    @Test func withoutItsThreadAHelperSendsOnTheSubmittingThread() throws {
        let connection = try Connection()
        defer { connection.close() }
        let progress = FanOutProgress.Helper()
        let helper = try FanOutHelper(sendPath: .sendCalls, gates: nil, progress: progress)
        helper.sendOnSubmittingThread()
        helper.submit(connection.batch, number: 1)
        #expect(progress.sent.load(ordering: .acquiring) == 1)  // nothing left unsent
        // Sent before `submit` returned: the line is in the socket now.
        let bytes = connection.readable()
        let tick = try #require(bytes.withUnsafeBytes { TickLineScanner.scan($0) })
        #expect(tick.link == 7)
        #expect(tick.sequence == 41)
        #expect(tick.timestampNanoseconds == 2_000_000_000)
        #expect(bytes.last == UInt8(ascii: "\n"))
    }

    @Test func withItsThreadNotYetRunningTheTicksWaitForIt() throws {
        let connection = try Connection()
        defer { connection.close() }
        let progress = FanOutProgress.Helper()
        let helper = try FanOutHelper(sendPath: .sendCalls, gates: nil, progress: progress)
        helper.submit(connection.batch, number: 3)
        // Queued for the helper's thread, which nobody started: nothing on the socket yet,
        // and batch 3 recorded as handed over but not sent (writers it names are kept).
        #expect(connection.readable().isEmpty)
        #expect(progress.submitted.load(ordering: .acquiring) == 3)
        #expect(progress.sent.load(ordering: .acquiring) == 0)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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

    @Test("a helper told to stop first sends what was handed over before, then ends")
    func stoppingSendsWhatWasHandedOverFirst() throws {
        let connection = try Connection()
        defer { connection.close() }
        let progress = FanOutProgress.Helper()
        let helper = try FanOutHelper(sendPath: .sendCalls, gates: nil, progress: progress)
        // The leader's last hand-over, then its stop, before the helper's thread looked:
        // run() on this thread plays that thread, and must not end with the batch unsent.
        helper.submit(connection.batch, number: 5)
        helper.stop()
        helper.run()
        #expect(progress.sent.load(ordering: .acquiring) == 5)
        #expect(connection.readable().withUnsafeBytes { TickLineScanner.scan($0) }?.sequence == 41)
    }

    @Test("a helper whose thread cannot be started sends on the leader; the others send on their own threads")
    func threadsThatCannotStart() throws {
        let first = try Connection()
        let second = try Connection()
        defer {
            first.close()
            second.close()
        }
        let progress = [FanOutProgress.Helper(), FanOutProgress.Helper()]
        let helpers = try progress.map { progress throws(PosixError) in try FanOutHelper(sendPath: .sendCalls, gates: nil, progress: progress) }
        var asked: [String] = []
        // The second thread hits the process's thread limit.
        let threads = TickEngine.startThreads(of: helpers) { name, body throws(PosixError) in
            asked.append(name)
            guard name == "fanout-1" else { throw PosixError(errno: EAGAIN, call: "pthread_create") }
            return try OSThread.spawn(name: name, body: body)
        }
        defer {
            for helper in helpers { helper.stop() }
            for thread in threads { thread.join() }
        }
        #expect(asked == ["fanout-1", "fanout-2"])
        #expect(threads.count == 1)

        // Without its thread: sent before `submit` returns.
        helpers[1].submit(second.batch, number: 1)
        #expect(progress[1].sent.load(ordering: .acquiring) == 1)
        #expect(second.readable().withUnsafeBytes { TickLineScanner.scan($0) }?.sequence == 41)

        // With its thread: sent there, a moment later (polled, with a deadline). The thread
        // records the batch as sent after its bytes are in the socket, so the reader may see
        // them first: wait for both.
        helpers[0].submit(first.batch, number: 1)
        let deadline = ContinuousClock.now + .seconds(10)
        var bytes: [UInt8] = []
        while (bytes.last != UInt8(ascii: "\n") || progress[0].sent.load(ordering: .acquiring) != 1) && ContinuousClock.now < deadline {
            bytes += first.readable()
            usleep(200)
        }
        #expect(bytes.withUnsafeBytes { TickLineScanner.scan($0) }?.sequence == 41)
        #expect(progress[0].sent.load(ordering: .acquiring) == 1)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import FrameRatePosix
import NIOCore
import Synchronization
import Testing

/// `SocketWriter` over real socket pairs: the ordering, partial-send and close rules the
/// tick plane and the control loop rely on when both write one connection.
@Suite struct SocketWriterTests {
    /// A socket pair whose writing end has a small send buffer, so tests can fill it.
    struct Pair {
        let writing: Int32
        let reading: Int32
        /// - Parameter writingEndBlocks: clears `O_NONBLOCK` on the writing end, so that only
        ///   a send's own flags keep a full buffer from blocking.
        init(sendBuffer: Int32 = 4096, writingEndBlocks: Bool = false) throws {
            (writing, reading) = try SystemCall.socketPair()
            SystemCall.setSendBufferSize(writing, bytes: sendBuffer)
            if writingEndBlocks {
                try #require(fcntl(writing, F_SETFL, fcntl(writing, F_GETFL) & ~O_NONBLOCK) == 0)
            }
        }

        /// Closes both ends (for tests whose ends no writer owns and closes).
        func close() {
            SystemCall.close(writing)
            SystemCall.close(reading)
        }

        /// Everything readable now.
        func drain() -> [UInt8] {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while let count = chunk.withUnsafeMutableBytes({ SystemCall.read(reading, into: $0) }), count > 0 {
                bytes += chunk[..<count]
            }
            return bytes
        }
    }

    /// Records what the writer tells its owner.
    final class Events: Sendable {
        let writability = Mutex<[Bool]>([])
        let flushRequests = Mutex(0)
        let closed = Mutex<[Int32]>([])
        let failures = Mutex<[Int32]>([])
        var observer: SocketWriter.Observer {
            SocketWriter.Observer(
                writabilityChanged: { writable in self.writability.withLock { $0.append(writable) } },
                needsFlush: { _ in self.flushRequests.withLock { $0 += 1 } },
                closing: { descriptor in self.closed.withLock { $0.append(descriptor) } },
                failed: { errno in self.failures.withLock { $0.append(errno) } }
            )
        }
    }

    static func line(_ index: Int, width: Int = 100) -> ByteBuffer {
        let body = "line \(index) "
        return ByteBuffer(string: body + String(repeating: "x", count: max(0, width - body.utf8.count - 1)) + "\n")
    }

    @Test func directAndQueuedBytesKeepTheirOrderAndNothingIsLostOnAPartialSend() throws {
        let pair = try Pair()
        let events = Events()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20, observer: events.observer)
        // Far more than the socket buffer holds: the first lines go straight to the kernel,
        // one is split by a partial send, the rest queue behind it.
        var outcomes: [SocketWriter.WriteOutcome] = []
        for index in 0..<2000 { outcomes.append(writer.write(Self.line(index))) }
        #expect(outcomes.first == .sent)
        #expect(outcomes.last == .queued)
        #expect(writer.queuedBytes > 0)
        #expect(events.flushRequests.withLock { $0 } == 1, "one flush request when the queue starts")

        var received = pair.drain()
        while writer.queuedBytes > 0 {
            writer.flush()
            received += pair.drain()
        }
        let expected = (0..<2000).flatMap { Array(Self.line($0).readableBytesView) }
        #expect(received == expected)
    }

    /// A client that takes a large queue a few KB per `send` (a reader of 338 KB
    /// `GetState` replies) must not cost a copy of the whole queue per `send`: the bytes
    /// moved to compact the queue stay within the bytes sent. Compacting after every
    /// partial send moved 24 times as much here.
    @Test func compactingTheQueueCostsAtMostTheBytesSent() throws {
        let pair = try Pair()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 30)
        let lines = 400
        for index in 0..<lines { writer.write(Self.line(index, width: 1000)) }
        let total = lines * 1000
        #expect(writer.queuedBytes > total / 2, "most of it queues behind the small socket buffer")

        var received = pair.drain()
        var flushes = 0
        while writer.queuedBytes > 0 {
            writer.flush()
            flushes += 1
            received += pair.drain()
        }
        #expect(received == (0..<lines).flatMap { Array(Self.line($0, width: 1000).readableBytesView) })
        #expect(flushes > 20, "the socket took the queue in many partial sends")
        #expect(writer.compactedBytes <= total, "moved \(writer.compactedBytes) bytes to send \(total)")
    }

    @Test func crossingTheHighWaterMarkIsReportedOnceEachWay() throws {
        let pair = try Pair()
        let events = Events()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 10_000, observer: events.observer)
        for index in 0..<1000 { writer.write(Self.line(index)) }
        #expect(!writer.isWritable)
        #expect(events.writability.withLock { $0 } == [false])
        while writer.queuedBytes > 0 {
            _ = pair.drain()
            writer.flush()
        }
        #expect(writer.isWritable)
        #expect(events.writability.withLock { $0 } == [false, true])
    }

    @Test func ticksWrittenDuringAReplyFollowIt() throws {
        let pair = try Pair(sendBuffer: 1 << 16)
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20)
        writer.writeTicks(ByteBuffer(string: "tick 1\n"))
        writer.beginReply()
        writer.writeTicks(ByteBuffer(string: "tick 2\n"))
        writer.beginReply()  // a second request in progress (batches, pipelining)
        writer.endReply(ByteBuffer(string: "reply A\n"))
        writer.writeTicks(ByteBuffer(string: "tick 3\n"))
        writer.endReply(nil)
        writer.writeTicks(ByteBuffer(string: "tick 4\n"))
        #expect(String(decoding: pair.drain(), as: UTF8.self) == "tick 1\nreply A\ntick 2\ntick 3\ntick 4\n")
    }

    @Test func aClosedWriterNeverWritesToADescriptorNumberThatWasReused() throws {
        // The kernel hands out the lowest free number, so the next socket made after the
        // close gets the old one, as a new connection would: unless a test running in
        // parallel opens a descriptor in between and takes it. Then the scenario is set up
        // again, until this test's own socket holds the old number.
        for _ in 0..<20 {
            let first = try Pair(sendBuffer: 1 << 16)
            let events = Events()
            let writer = SocketWriter(destination: .socket(first.writing), highWater: 1 << 20, observer: events.observer)
            writer.write(ByteBuffer(string: "before\n"))
            writer.close()
            #expect(events.closed.withLock { $0 } == [first.writing])
            #expect(writer.isClosed)
            let (reused, reusedPeer) = try SystemCall.socketPair()
            defer {
                SystemCall.close(reused)
                SystemCall.close(reusedPeer)
                SystemCall.close(first.reading)
            }
            guard reused == first.writing || reusedPeer == first.writing else { continue }
            #expect(writer.write(ByteBuffer(string: "after\n")) == .discarded)
            #expect(writer.writeTicks(ByteBuffer(string: "tick\n")) == .discarded)
            #expect(writer.flush())
            // Nothing reached whichever end now has the old number's peer.
            let other = reused == first.writing ? reusedPeer : reused
            var chunk = [UInt8](repeating: 0, count: 64)
            #expect(chunk.withUnsafeMutableBytes { SystemCall.read(other, into: $0) } == nil)
            #expect(String(decoding: first.drain(), as: UTF8.self) == "before\n")
            writer.close()  // idempotent
            return
        }
        Issue.record("in 20 tries another thread always took the closed descriptor's number first")
    }

    @Test func aFailedConnectionDiscardsAndDrainWaitersAreReleased() throws {
        let pair = try Pair()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20)
        for index in 0..<500 { writer.write(Self.line(index)) }
        let released = Mutex(false)
        writer.whenDrained { released.withLock { $0 = true } }
        #expect(!released.withLock { $0 })
        SystemCall.close(pair.reading)
        writer.flush()
        #expect(released.withLock { $0 }, "a dead connection will never drain: the waiter is not left hanging")
        #expect(writer.write(Self.line(0)) == .discarded)
        writer.close()
    }

    /// A peer that shuts down only its reading side leaves the daemon's end readable and
    /// never hung up: the writer's observer is the only one to learn the peer is gone, once,
    /// whichever path met the failure (a direct write, a flush, a tick send's landing).
    @Test(arguments: ["write", "flush", "landing"])
    func aFailedSendIsReportedOnceWhicheverPathMeetsIt(path: String) throws {
        let pair = try Pair()
        let events = Events()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20, observer: events.observer)
        if path == "flush" {
            for index in 0..<500 { writer.write(Self.line(index)) }
            try #require(writer.queuedBytes > 0, "the small send buffer queued the rest")
        }
        try #require(shutdown(pair.reading, Int32(SHUT_RD)) == 0)
        switch path {
        case "write":
            #expect(writer.write(Self.line(0)) == .discarded)
        case "flush":
            writer.flush()
            #expect(writer.queuedBytes == 0, "a dead connection's queue is dropped")
        default:
            guard case .socket(let descriptor, _) = writer.claimForTicks() else {
                Issue.record("an idle writer over a socket lets the fan-out send directly")
                return
            }
            let line = Self.line(0)
            line.withUnsafeReadableBytes { bytes in writer.landTicks(SystemCall.send(descriptor, bytes), of: bytes) }
        }
        #expect(events.failures.withLock { $0 } == [EPIPE])
        #expect(writer.isClosed)
        // Later sends are discarded without another report.
        #expect(writer.write(Self.line(1)) == .discarded)
        writer.flush()
        #expect(writer.claimForTicks() == .closed)
        #expect(events.failures.withLock { $0 } == [EPIPE])
        writer.close()
        SystemCall.close(pair.reading)
    }

    @Test func aSinkTakesWholeWritesInOrder() {
        let received = Mutex<[String]>([])
        let writer = SocketWriter(destination: .sink { bytes in received.withLock { $0.append(String(buffer: bytes)) } }, highWater: 16)
        writer.write(ByteBuffer(string: "a\n"))
        writer.beginReply()
        writer.writeTicks(ByteBuffer(string: "t\n"))
        writer.endReply(ByteBuffer(string: "r\n"))
        #expect(received.withLock { $0 } == ["a\n", "r\n", "t\n"])
    }
}

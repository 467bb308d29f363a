#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
@testable import FrameRatePosix
import NIOCore
import Synchronization
import Testing

/// The tick plane's batched sends over real socket pairs, on both paths (one io_uring
/// submission, one `send` per connection): claimed sends keep the writer's order, a send
/// that does not fit leaves its remainder ahead of later bytes, and a close during a send
/// releases the descriptor only after it.
@Suite struct BatchSenderTests {
    typealias Pair = SocketWriterTests.Pair
    typealias Events = SocketWriterTests.Events

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// `count` lines, `width` bytes each, for connection `connection`.
    static func lines(connection: Int, count: Int, width: Int = 100) -> String {
        (0..<count).map { index in
            let body = "c\(connection) t\(index) "
            return body + String(repeating: "x", count: max(0, width - body.utf8.count - 1)) + "\n"
        }.joined()
    }

    @Test(arguments: BatchSender.Path.allCases)
    func oneBatchReachesEveryConnectionWithEachOnesOwnBytes(path: BatchSender.Path) throws {
        let pairs = try (0..<5).map { _ in try Pair(sendBuffer: 1 << 16) }
        defer { for pair in pairs { close(pair.reading) } }
        let writers = pairs.map { SocketWriter(destination: .socket($0.writing), highWater: 1 << 20) }
        var sender = BatchSender(preferred: path)
        var bytes = ByteBuffer()
        var segments: [BatchSender.Segment] = []
        for (index, writer) in writers.enumerated() {
            let start = bytes.readableBytes
            bytes.writeString(Self.lines(connection: index, count: index + 1))
            segments.append(BatchSender.Segment(writer: .passUnretained(writer), offset: start, length: bytes.readableBytes - start))
        }
        sender.send(bytes, segments: segments)
        for (index, pair) in pairs.enumerated() {
            #expect(Self.text(pair.drain()) == Self.lines(connection: index, count: index + 1))
        }
        for writer in writers { writer.close() }
    }

    @Test(arguments: BatchSender.Path.allCases)
    func aSendThatDoesNotFitQueuesItsRemainderAheadOfLaterBytes(path: BatchSender.Path) throws {
        let pair = try Pair(sendBuffer: 4096)
        defer { close(pair.reading) }
        let events = Events()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20, observer: events.observer)
        var sender = BatchSender(preferred: path)
        // Far more than the socket buffer takes: the send is partial.
        let ticks = Self.lines(connection: 0, count: 1000)
        sender.send(ByteBuffer(string: ticks), segments: [BatchSender.Segment(writer: .passUnretained(writer), offset: 0, length: ticks.utf8.count)])
        #expect(writer.queuedBytes > 0)
        #expect(events.flushRequests.withLock { $0 } == 1)
        // A reply written after the batch goes behind the remainder.
        #expect(writer.write(ByteBuffer(string: "reply\n")) == .queued)
        var received = pair.drain()
        while writer.queuedBytes > 0 {
            writer.flush()
            received += pair.drain()
        }
        #expect(Self.text(received) == ticks + "reply\n")
        writer.close()
    }

    @Test func whileClaimedEveryOtherWriteQueuesAndTheLandingSendsItAfterTheTicks() throws {
        let pair = try Pair(sendBuffer: 1 << 16)
        defer { close(pair.reading) }
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20)
        guard case .socket(let descriptor, _) = writer.claimForTicks() else {
            Issue.record("an idle socket writer must be claimable")
            return
        }
        #expect(writer.claimForTicks() == .indirect)  // one claim at a time
        // The control loop replies while the fan-out thread's send is in flight.
        #expect(writer.write(ByteBuffer(string: "reply\n")) == .queued)
        #expect(writer.flush() == false)  // the landing flushes, not this
        let ticks = Self.lines(connection: 0, count: 3)
        Array(ticks.utf8).withUnsafeBytes { bytes in
            writer.landTicks(SystemCall.send(descriptor, bytes), of: bytes)
        }
        #expect(Self.text(pair.drain()) == ticks + "reply\n")
        #expect(writer.queuedBytes == 0)
        writer.close()
    }

    @Test func aCloseDuringTheSendReleasesTheDescriptorOnlyAtTheLanding() throws {
        let pair = try Pair(sendBuffer: 1 << 16)
        defer { close(pair.reading) }
        let events = Events()
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20, observer: events.observer)
        guard case .socket(let descriptor, _) = writer.claimForTicks() else {
            Issue.record("an idle socket writer must be claimable")
            return
        }
        writer.close()
        #expect(events.closed.withLock { $0 } == [descriptor])  // its owner stops watching at once
        #expect(fcntl(descriptor, F_GETFD) >= 0)  // but the number is still ours: no reuse mid-send
        let ticks = Self.lines(connection: 0, count: 1)
        Array(ticks.utf8).withUnsafeBytes { bytes in
            writer.landTicks(SystemCall.send(descriptor, bytes), of: bytes)
        }
        #expect(fcntl(descriptor, F_GETFD) == -1)
        #expect(writer.claimForTicks() == .closed)
        #expect(writer.write(ByteBuffer(string: "late\n")) == .discarded)
    }

    @Test func aReplyInProgressOrQueuedBytesSendTheTicksTheIndirectWay() throws {
        let pair = try Pair(sendBuffer: 1 << 16)
        defer { close(pair.reading) }
        let writer = SocketWriter(destination: .socket(pair.writing), highWater: 1 << 20)
        var sender = BatchSender(preferred: .ioUring)
        writer.beginReply()
        #expect(writer.claimForTicks() == .indirect)
        let ticks = Self.lines(connection: 0, count: 2)
        sender.send(ByteBuffer(string: ticks), segments: [BatchSender.Segment(writer: .passUnretained(writer), offset: 0, length: ticks.utf8.count)])
        #expect(pair.drain().isEmpty)  // held for the reply
        writer.endReply(ByteBuffer(string: "reply\n"))
        #expect(Self.text(pair.drain()) == "reply\n" + ticks)
        writer.close()
    }

    @Test func aConnectionThatFailedDropsItsLinesAndTheOthersStillGetTheirs() throws {
        let alive = try Pair(sendBuffer: 1 << 16)
        let dead = try Pair(sendBuffer: 1 << 16)
        defer { close(alive.reading) }
        close(dead.reading)  // the peer is gone: the send fails with EPIPE
        let writers = [alive, dead].map { SocketWriter(destination: .socket($0.writing), highWater: 1 << 20) }
        var sender = BatchSender(preferred: .ioUring)
        let line = "tick\n"
        let bytes = ByteBuffer(string: line + line)
        sender.send(bytes, segments: [
            BatchSender.Segment(writer: .passUnretained(writers[1]), offset: 0, length: 5),
            BatchSender.Segment(writer: .passUnretained(writers[0]), offset: 5, length: 5),
        ])
        #expect(Self.text(alive.drain()) == line)
        #expect(writers[1].isClosed)
        #expect(writers[1].write(ByteBuffer(string: line)) == .discarded)
        for writer in writers { writer.close() }
    }

    /// Whether the peer of `pair.reading` has closed: EOF after the bytes still queued.
    static func peerClosed(_ pair: Pair) -> Bool {
        _ = pair.drain()
        var byte: UInt8 = 0
        return recv(pair.reading, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    @Test func aRegisteredConnectionIsSentToThroughItsSlotAndClosesForItsPeerWhenTheWriterCloses() throws {
        var sender = BatchSender(preferred: .ioUring)
        try #require(sender.path == .ioUring, "io_uring unavailable: \(sender.fallbackReason ?? "")")
        let pairs = try (0..<2).map { _ in try Pair(sendBuffer: 1 << 16) }
        defer { for pair in pairs { close(pair.reading) } }
        let writers = pairs.map { SocketWriter(destination: .socket($0.writing), highWater: 1 << 20) }
        let line = "tick\n"
        for _ in 0..<2 {
            sender.send(ByteBuffer(string: line + line), segments: [
                BatchSender.Segment(writer: .passUnretained(writers[0]), offset: 0, length: 5),
                BatchSender.Segment(writer: .passUnretained(writers[1]), offset: 5, length: 5),
            ])
        }
        // The first batch registered both descriptors; the second went through the slots.
        guard case .socket(let descriptor, let registered) = writers[0].claimForTicks() else {
            Issue.record("claimable")
            return
        }
        #expect(registered)
        Array(line.utf8).withUnsafeBytes { writers[0].landTicks(SystemCall.send(descriptor, $0), of: $0) }
        for pair in pairs { #expect(Self.text(pair.drain()) == line + line + (pair.reading == pairs[0].reading ? line : "")) }
        // Closing a writer empties its slot first: the table's reference to the socket would
        // otherwise keep the connection open, and its peer would never see the end.
        writers[0].close()
        #expect(Self.peerClosed(pairs[0]))
        #expect(!Self.peerClosed(pairs[1]))
        // A close while a send is in flight releases slot and socket at the landing.
        guard case .socket(let second, true) = writers[1].claimForTicks() else {
            Issue.record("claimable and registered")
            return
        }
        writers[1].close()
        #expect(!Self.peerClosed(pairs[1]))
        Array(line.utf8).withUnsafeBytes { writers[1].landTicks(SystemCall.send(second, $0), of: $0) }
        #expect(Self.peerClosed(pairs[1]))
    }

    @Test("after an io_uring failure the sender never submits to the ring again, sends with send(2) and says so once")
    func aFailedRingIsAbandoned() throws {
        var sender = BatchSender(preferred: .ioUring)
        try #require(sender.path == .ioUring, "io_uring unavailable: \(sender.fallbackReason ?? "")")
        let pairs = try (0..<2).map { _ in try Pair(sendBuffer: 1 << 16) }
        defer { for pair in pairs { close(pair.reading) } }
        let writers = pairs.map { SocketWriter(destination: .socket($0.writing), highWater: 1 << 20) }
        let batch = {
            sender.send(ByteBuffer(string: "tick\ntick\n"), segments: [
                BatchSender.Segment(writer: .passUnretained(writers[0]), offset: 0, length: 5),
                BatchSender.Segment(writer: .passUnretained(writers[1]), offset: 5, length: 5),
            ])
        }
        batch()  // registers both descriptors in the ring
        #expect(sender.takeRingFailure() == nil)
        // What `send` does when io_uring_enter fails mid-batch.
        sender.abandonRing(after: PosixError(errno: EBUSY, call: "io_uring_enter"))
        #expect(sender.path == .sendCalls)
        #expect(sender.fallbackReason?.contains("io_uring failed while sending") == true)
        #expect(sender.takeRingFailure()?.errno == EBUSY)
        #expect(sender.takeRingFailure() == nil, "reported once")
        batch()
        for pair in pairs { #expect(Self.text(pair.drain()) == "tick\ntick\n") }
        // The descriptors registered before still leave the ring's table when their writers close.
        writers[0].close()
        #expect(Self.peerClosed(pairs[0]))
        writers[1].close()
        #expect(Self.peerClosed(pairs[1]))
    }

    @Test("io_uring_enter failing mid-batch: the chunk in the ring fails, later chunks go out with send(2), the ring is not used again")
    func aRingThatFailsMidBatch() throws {
        // Two sends per io_uring_enter, no registered files (io_uring_register would fail too).
        var sender = BatchSender(preferred: .ioUring, ringEntries: 2, registeredFiles: 0)
        try #require(sender.path == .ioUring, "io_uring unavailable: \(sender.fallbackReason ?? "")")
        // The ring's descriptor now names /dev/null: its next io_uring_enter fails.
        let descriptor = sender.ringDescriptor
        let ring = try #require(descriptor)
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        #expect(dup2(null, ring) == ring)
        let pairs = try (0..<5).map { _ in try Pair(sendBuffer: 1 << 16) }
        defer { for pair in pairs { close(pair.reading) } }
        // Each writer's owner hears once that its connection failed, so it can close it.
        let failures = Mutex<[Int]>([])
        let writers = pairs.indices.map { index in
            SocketWriter(
                destination: .socket(pairs[index].writing), highWater: 1 << 20,
                observer: SocketWriter.Observer(failed: { _ in failures.withLock { $0.append(index) } })
            )
        }
        defer { for writer in writers { writer.close() } }
        func batch(_ round: Int, to indices: Range<Int>) {
            var bytes = ByteBuffer()
            var segments: [BatchSender.Segment] = []
            for index in indices {
                let start = bytes.readableBytes
                bytes.writeString("round \(round) connection \(index)\n")
                segments.append(BatchSender.Segment(writer: .passUnretained(writers[index]), offset: start, length: bytes.readableBytes - start))
            }
            sender.send(bytes, segments: segments)
        }
        batch(1, to: 0..<5)
        let (path, descriptorAfter) = (sender.path, sender.ringDescriptor)
        #expect(path == .sendCalls)
        #expect(descriptorAfter == nil)
        #expect(sender.takeRingFailure() != nil)
        // The first chunk was in the failed submission: outcome unknown, so failed (closed),
        // and nothing reached its readers. The later chunks never reached the ring: sent.
        for index in 0..<2 {
            #expect(writers[index].isClosed)
            #expect(pairs[index].drain().isEmpty)
        }
        for index in 2..<5 { #expect(Self.text(pairs[index].drain()) == "round 1 connection \(index)\n") }
        #expect(failures.withLock { $0 } == [0, 1])
        batch(2, to: 2..<5)
        for index in 2..<5 { #expect(Self.text(pairs[index].drain()) == "round 2 connection \(index)\n") }
    }

    @Test func theSendPathIsIoUringWhereTheKernelAllowsIt() throws {
        let sender = BatchSender(preferred: .ioUring)
        // `io_uring_disabled` 0 (or no such sysctl, before 6.6): io_uring is open to every process.
        let disabled = (try? String(contentsOfFile: "/proc/sys/kernel/io_uring_disabled", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "0"
        if disabled == "0" {
            #expect(sender.path == .ioUring, "fell back: \(sender.fallbackReason ?? "no reason")")
            #expect(sender.fallbackReason == nil)
        } else {
            #expect(sender.path == .sendCalls)
            #expect(sender.fallbackReason != nil)
        }
        #expect(BatchSender(preferred: .sendCalls).path == .sendCalls)
        #expect(BatchSender(preferred: .sendCalls).fallbackReason == nil)
    }
}

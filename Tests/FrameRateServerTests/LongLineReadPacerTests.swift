import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// Reads of long open lines, paced across connections (issue 9 §1, the partial-line
/// attack): a stepped loop and exact counts.
@Suite("Long-line read pacing")
struct LongLineReadPacerTests {
    @Test("at most readsPerInterval reads go ahead per interval, in the order asked")
    func releasesInOrderAtItsPace() {
        let loop = EmbeddedEventLoop()
        let pacer = LongLineReadPacer(eventLoop: loop, readsPerInterval: 2, interval: .milliseconds(1))
        var released: [Int] = []
        for index in 0..<5 { pacer.enqueue { released.append(index) } }
        #expect(released.isEmpty, "nothing goes ahead before the first interval")
        loop.advanceTime(by: .microseconds(999))
        #expect(released.isEmpty)
        loop.advanceTime(by: .microseconds(1))
        #expect(released == [0, 1])
        loop.advanceTime(by: .milliseconds(1))
        #expect(released == [0, 1, 2, 3])
        loop.advanceTime(by: .milliseconds(1))
        #expect(released == [0, 1, 2, 3, 4])
        #expect(pacer.waitingCount == 0)
        // Idle: nothing scheduled, the next request waits one interval again.
        pacer.enqueue { released.append(5) }
        loop.advanceTime(by: .milliseconds(1))
        #expect(released.last == 5)
    }

    @Test("the open line's length: the bytes after the last newline, or all of a read without one")
    func openLineLength() {
        #expect(PartialLineTimeoutHandler.openLineLength(after: 0, reading: ByteBuffer(string: "")) == 0)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: ByteBuffer(string: "abc")) == 13)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: ByteBuffer(string: "a\n")) == 0)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: ByteBuffer(string: "a\nbc\ndef")) == 3)
        #expect(PartialLineTimeoutHandler.openLineLength(after: Int.max - 1, reading: ByteBuffer(string: "abc")) == Int.max)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: ByteBuffer(string: "\n")) == 0)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: ByteBuffer(string: "\n\n\nabcd")) == 4)
        // A read that starts past the buffer's first byte (a slice) is searched from its reader index.
        var sliced = ByteBuffer(string: "x\nyz" + String(repeating: "w", count: 20_000))
        sliced.moveReaderIndex(forwardBy: 2)
        #expect(PartialLineTimeoutHandler.openLineLength(after: 10, reading: sliced) == 10 + 20_002)
        // Whether the read ended a line: what restarts the partial-line deadline.
        #expect(PartialLineTimeoutHandler.openLine(after: 10, reading: sliced) == (10 + 20_002, false))
        #expect(PartialLineTimeoutHandler.openLine(after: 10, reading: ByteBuffer(string: "abc")) == (13, false))
        #expect(PartialLineTimeoutHandler.openLine(after: 10, reading: ByteBuffer(string: "a\nbc")) == (2, true))
        #expect(PartialLineTimeoutHandler.openLine(after: 10, reading: ByteBuffer(string: "\n")) == (0, true))
        #expect(PartialLineTimeoutHandler.openLine(after: 0, reading: ByteBuffer(string: "")) == (0, false))
    }

    /// Counts the read requests that reach the head of the pipeline.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// A connected embedded channel whose partial-line handler asks a pacer with
    /// `readsPerInterval` reads per millisecond, and a counter of the reads that pass it.
    static func pacedConnection(readsPerInterval: Int) throws -> (EmbeddedEventLoop, LongLineReadPacer, ReadCounter, EmbeddedChannel) {
        let loop = EmbeddedEventLoop()
        let pacer = LongLineReadPacer(eventLoop: loop, readsPerInterval: readsPerInterval, interval: .milliseconds(1))
        let counter = ReadCounter()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers(counter, PartialLineTimeoutHandler(timeout: .seconds(10), pacer: pacer))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/x")).wait()
        return (loop, pacer, counter, channel)
    }

    @Test("a connection reads at once until its open line passes longLine bytes, then only when the pacer lets it")
    func pacesOnlyLongOpenLines() throws {
        let (loop, pacer, counter, channel) = try Self.pacedConnection(readsPerInterval: 1)
        let afterConnect = counter.reads
        channel.read()
        #expect(counter.reads == afterConnect + 1)
        // Short lines and an open line of exactly longLine bytes: reads go at once.
        try channel.writeInbound(ByteBuffer(string: "{}\n{}\n" + String(repeating: "x", count: PartialLineTimeoutHandler.longLine)))
        channel.read()
        #expect(counter.reads == afterConnect + 2)
        // One byte more: the next read waits for the pacer, and asking again adds nothing.
        try channel.writeInbound(ByteBuffer(string: "x"))
        channel.read()
        channel.read()
        #expect(counter.reads == afterConnect + 2 && pacer.waitingCount == 1)
        loop.advanceTime(by: .milliseconds(1))
        #expect(counter.reads == afterConnect + 3 && pacer.waitingCount == 0)
        // The line ends: reads go at once again.
        try channel.writeInbound(ByteBuffer(string: "\n"))
        channel.read()
        #expect(counter.reads == afterConnect + 4)
        _ = try channel.finish()
    }

    @Test("a paced read of a connection that closed meanwhile is dropped")
    func closedConnectionsAreSkipped() throws {
        let (loop, pacer, counter, channel) = try Self.pacedConnection(readsPerInterval: 4)
        try channel.writeInbound(ByteBuffer(string: String(repeating: "x", count: PartialLineTimeoutHandler.longLine + 1)))
        channel.read()
        #expect(pacer.waitingCount == 1)
        try channel.close().wait()
        let before = counter.reads
        loop.advanceTime(by: .milliseconds(1))
        #expect(counter.reads == before && pacer.waitingCount == 0)
    }
}

import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing
@testable import FrameRateServer

/// A request cut in two by a restart: the stopping daemon keeps the half it read (the
/// decoder's partial line), and the daemon that takes over handles it with the other half.
@Suite("Restart handover: a partial request line")
struct HandoverInputTests {
    /// A connection with the production pipeline (``HandoverLineDecoder``), optionally adopted.
    static func open(_ harness: ServerHarness, adopting: HandoverSession? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: harness.loop)
        let input = HandoverInput()
        let destination: @Sendable (ChannelHandlerContext) -> SocketWriter.Destination = { context in
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            return .sink { bytes in bound.value.writeAndFlush(NIOAny(bytes), promise: nil) }
        }
        try channel.pipeline.syncOperations.addHandlers(
            ByteToMessageHandler(HandoverLineDecoder(maximumLineLength: 65536, input: input)),
            SessionHandler(core: harness.core, peer: Peers.root, destination: destination, input: input, adopting: adopting)
        )
        channel.connect(to: try SocketAddress(unixDomainSocketPath: "/nonexistent/framerated-test.sock"), promise: nil)
        harness.loop.run()
        return channel
    }

    static func replies(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            lines += String(buffer: buffer).split(separator: "\n").map(String.init)
        }
        return lines
    }

    @Test("the half of a line read before the handover is answered once the rest arrives at the new daemon")
    func partialLineCarriesOver() throws {
        let old = ServerHarness()
        let channel = try Self.open(old)
        try channel.writeInbound(channel.allocator.buffer(string: #"{"jsonrpc":"2.0","id":1,"method":"grpc.health.v1.Health/Check"}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"#))
        old.loop.run()
        #expect(try Self.replies(channel).count == 1)

        let session = try #require(old.core.sessions.values.first)
        var pending: [UInt8]??
        session.handOver?().assumeIsolated().whenSuccess { pending = $0 }
        old.loop.run()
        let kept = try #require(pending ?? nil)
        #expect(String(decoding: kept, as: UTF8.self) == #"{"jsonrpc":"2.0","id":2,"#)

        let new = ServerHarness()
        let record = HandoverSession(owner: session.owner, inode: 1, watches: [], pendingInput: kept)
        let adopted = try Self.open(new, adopting: record)
        #expect(try Self.replies(adopted).isEmpty)
        try adopted.writeInbound(adopted.allocator.buffer(string: #""method":"grpc.health.v1.Health/Check"}"# + "\n"))
        new.loop.run()
        let answers = try Self.replies(adopted)
        #expect(answers.count == 1)
        #expect(answers.first?.contains(#""id":2"#) == true)
        #expect(new.core.sessions[session.owner] != nil)
    }
}

import FrameRateModel
import FrameRateProtocol
import NIOCore

/// The per-connection channel handler: hands each framed line to the core,
/// writes the reply, and reports writability and closure. Runs on the
/// compositor's event loop, like the core itself.
final class SessionHandler: ChannelInboundHandler {
    typealias InboundIn = NDJSONFrame
    typealias OutboundOut = ByteBuffer

    private let core: CompositorCore
    private let peer: PeerCredentials
    private var session: Session?

    init(core: CompositorCore, peer: PeerCredentials) {
        self.core = core
        self.peer = peer
    }

    func channelActive(context: ChannelHandlerContext) {
        session = core.open(peer: peer, context: context)
        if session == nil { return }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        switch unwrapInboundIn(data) {
        case .line(let line):
            if let reply = core.handle(line: line, from: session) {
                context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
            }
        case .oversized(let limit):
            core.rejectOversizedLine(limit: limit, from: session)
            let error = JSONRPCOutboundMessage.response(
                id: nil, result: .failure(.invalidRequest(detail: "line longer than \(limit) bytes; the connection is closed"))
            )
            var buffer = context.channel.allocator.buffer(capacity: 256)
            error.writeLine(into: &buffer)
            context.writeAndFlush(wrapOutboundOut(buffer))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if let session { core.writabilityChanged(session) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let session { core.close(session) }
        session = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Connection-level failures (reset by peer, broken pipe): close; channelInactive releases the links.
        core.connectionError(error, session: session)
        context.close(promise: nil)
    }
}

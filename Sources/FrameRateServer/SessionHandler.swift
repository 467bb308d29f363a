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
    /// The connection's socket, when the daemon accepted it itself (see ``Session/descriptor``).
    private let descriptor: Int32?
    private var session: Session?
    /// Set once an oversized line was answered: nothing more is read from this connection.
    private var closing = false

    init(core: CompositorCore, peer: PeerCredentials, descriptor: Int32? = nil) {
        self.core = core
        self.peer = peer
        self.descriptor = descriptor
    }

    func channelActive(context: ChannelHandlerContext) {
        session = core.open(peer: peer, context: context, descriptor: descriptor)
        if session == nil { return }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session, !closing else { return }
        switch unwrapInboundIn(data) {
        case .line(let line):
            if let reply = core.handle(line: line, from: session) {
                session.write(reply)
            }
        case .oversized(let limit):
            closing = true
            core.rejectOversizedLine(limit: limit, from: session)
            let error = JSONRPCOutboundMessage.response(
                id: nil, result: .failure(.invalidRequest(detail: "line longer than \(limit) bytes; the connection is closed"))
            )
            var buffer = context.channel.allocator.buffer(capacity: 256)
            error.writeLine(into: &buffer)
            session.write(buffer).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// The client shut down its sending side (e.g. `printf '…\n' | nc -U`). Every line it
    /// sent has been answered by now; a connection holding no link and no watch has
    /// nothing more to receive, so it is closed once the replies are flushed. One that
    /// holds links keeps receiving ticks until it closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, let session { core.inputClosed(session) }
        if case ChannelEvent.inputClosed = event, let session, session.links.isEmpty, session.watches.isEmpty {
            session.write(context.channel.allocator.buffer(capacity: 0))
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
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

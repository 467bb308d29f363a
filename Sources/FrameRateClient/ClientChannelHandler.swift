import FrameRateProtocol
import NIOCore

/// The connection's inbound handler: hands each line from the daemon to the
/// ``ClientRouter``, and shuts the router down when the channel closes.
final class ClientChannelHandler: ChannelInboundHandler {
    typealias InboundIn = NDJSONFrame
    typealias OutboundOut = ByteBuffer

    private let router: ClientRouter

    init(router: ClientRouter) {
        self.router = router
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .line(let line):
            let delivery = router.receive(line: line)
            if !delivery.writes.isEmpty {
                for message in delivery.writes {
                    var buffer = context.channel.allocator.buffer(capacity: 96)
                    message.writeLine(into: &buffer)
                    context.write(wrapOutboundOut(buffer), promise: nil)
                }
                context.flush()
            }
            if let reason = delivery.closeReason { close(context: context, reason: reason) }
        case .oversized(let limit):
            close(context: context, reason: .protocolViolation("a line longer than \(limit) bytes"))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        router.shutDown(reason: .connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context: context, reason: .connectionClosed)
    }

    private func close(context: ChannelHandlerContext, reason: FrameRateClientError) {
        router.shutDown(reason: reason)
        context.close(promise: nil)
    }
}

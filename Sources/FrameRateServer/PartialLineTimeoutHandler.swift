import NIOCore

/// Closes a connection whose request line does not arrive completely in time: a client
/// that sends a line without its newline (slowly, or never) holds the daemon's memory for
/// at most ``timeout``.
///
/// It sits before the line decoder and looks only at the last byte of each read: a read
/// that ends a line clears the deadline; one that leaves a line open starts it (if it is
/// not running). When it expires it fires ``PartialLineTimedOut`` for the session handler,
/// which answers with an error and closes the connection.
final class PartialLineTimeoutHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The user event fired when a line took longer than the timeout.
    struct PartialLineTimedOut: Sendable {
        /// The timeout that expired.
        let timeout: Duration
    }

    private let timeout: Duration
    private var deadline: Scheduled<Void>?

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if buffer.readableBytes > 0 {
            let endsLine = buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\n")
            if endsLine {
                deadline?.cancel()
                deadline = nil
            } else if deadline == nil {
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
                let amount = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue &+ attoseconds / 1_000_000_000
                deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(amount)) { [timeout] in
                    context.fireUserInboundEventTriggered(PartialLineTimedOut(timeout: timeout))
                }
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}

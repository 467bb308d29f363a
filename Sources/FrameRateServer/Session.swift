import FrameRateModel
import NIOCore

/// One client connection as the core sees it: its owner id, the kernel's
/// credentials, the links and watches it holds, and its outbound state.
/// Confined to the compositor's event loop.
final class Session {
    /// The model's name for this connection.
    let owner: OwnerID
    /// Who is connected.
    let peer: PeerCredentials
    /// The session handler's context: ticks and replies are written from here,
    /// so they skip the rest of the pipeline.
    let context: ChannelHandlerContext
    /// Links this connection holds, with the display each is on.
    var links: [LinkID: DisplayID] = [:]
    /// Watches this connection holds.
    var watches: Set<UInt64> = []
    /// Fires when the connection has stayed unwritable too long.
    var unwritableDeadline: Scheduled<Void>?
    /// Ticks encoded for this connection at the current vsync, written once after the fan-out.
    var pendingTicks: ByteBuffer?

    init(owner: OwnerID, peer: PeerCredentials, context: ChannelHandlerContext) {
        self.owner = owner
        self.peer = peer
        self.context = context
    }

    /// Whether the connection takes more outbound bytes now (below its high-water mark).
    var isWritable: Bool { context.channel.isWritable }

    /// Writes one complete line (or several) and flushes.
    func write(_ buffer: ByteBuffer) {
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }
}

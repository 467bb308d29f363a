import FrameRateModel
import FrameRatePosix
import NIOCore

/// One client connection as the control loop sees it: its owner id, the kernel's
/// credentials, its watches, and the writer every byte to it goes through.
/// Confined to the control event loop (the tick plane reaches the writer through
/// ``DaemonState/writers``, never the session).
///
/// Which links it holds is the model's to say (``Compositor/links(of:)``), not the session's.
final class Session {
    /// The model's name for this connection.
    let owner: OwnerID
    /// Who is connected.
    let peer: PeerCredentials
    /// The session handler's context: for closing the connection and pausing its reads.
    let context: ChannelHandlerContext
    /// Every byte to the connection goes through here: replies, notifications, and ticks
    /// from the tick plane unless it has a tick socket (``tickWriter``).
    let writer: SocketWriter
    /// Root, the daemon's user or the admin group, as of connecting: exempt from per-user limits.
    let isPrivileged: Bool
    /// Watches this connection holds.
    var watches: Set<UInt64> = []
    /// The writer of its tick socket (`TickSocket/Attach`): the one the tick plane writes
    /// this connection's Tick and Presented lines to, through the connection's word in
    /// ``SharedModel/gates``. Nothing reads from that socket: no epoll set watches it, so a
    /// client's read of a tick never has to wake a waiter on the daemon's end. `nil`: ticks
    /// go through ``writer`` with the replies.
    var tickWriter: SocketWriter?
    /// The token its `TickSocket/Open` returned, while no connection has attached with it.
    var tickSocketToken: String?
    /// Whether it ever sent a Register (or came over in a handover holding links): a tick
    /// socket attaches only before that (no tick line of it was ever claimed by the
    /// fan-out through ``writer``).
    var hasRegisteredLinks = false
    /// It attached as another connection's tick socket: its reply is its last line, then
    /// the connection closes (the socket lives on in the other's ``tickWriter``).
    var becameTickSocket = false
    /// Requests and notifications it sent so far (each message of a batch counts).
    var handledRequests = 0
    /// Whether the writer's queue is below its high-water mark now (read under the writer's
    /// lock). Not a copy kept by the loop: the writer reports crossing the mark through a hop
    /// to the loop, which arrives only after the current turn, and everything written in
    /// between (events to a watcher that does not read, replies) would pile up past it.
    var isWritable: Bool { writer.isWritable }
    /// Called on the loop when the connection can take replies again (the handler resumes reading).
    var resume: (() -> Void)?
    /// Stops reading and handling, and returns the bytes read but not handled (`nil`: the
    /// connection is being closed and cannot be handed over). Set by the session handler.
    var handOver: (() -> EventLoopFuture<[UInt8]?>)?
    /// Runs the rest of a line whose messages span turns of the loop, and writes its reply:
    /// before a handover, while every request is still served. Set by the session handler.
    var finishLine: (() -> Void)?
    /// The socket the writer owns (`nil` for a test sink): what a handover stores.
    var descriptor: Int32? {
        if case .socket(let descriptor) = destination { return descriptor }
        return nil
    }
    /// Where the writer writes.
    let destination: SocketWriter.Destination
    /// The tick socket's descriptor, owned by ``tickWriter``: what a handover stores beside ``descriptor``.
    var tickDescriptor: Int32?

    init(
        owner: OwnerID, peer: PeerCredentials, context: ChannelHandlerContext, writer: SocketWriter, destination: SocketWriter.Destination,
        isPrivileged: Bool
    ) {
        self.owner = owner
        self.destination = destination
        self.isPrivileged = isPrivileged
        self.peer = peer
        self.context = context
        self.writer = writer
    }

    /// Requests being handled (``beginReply()`` without its ``endReply(_:)`` yet).
    private(set) var repliesInProgress = 0

    /// A request's handling starts: ticks written from now on, on either socket, wait
    /// until its reply is written (``SocketWriter/beginReply()``). So a `Register` reply
    /// is written before the link's first tick, on a tick socket too.
    func beginReply() {
        repliesInProgress += 1
        writer.beginReply()
        tickWriter?.beginReply()
    }

    /// Writes the request's reply (`nil`: nothing to answer), then the ticks held back
    /// meanwhile: a tick socket's after the reply is written.
    func endReply(_ reply: ByteBuffer?) {
        repliesInProgress -= 1
        writer.endReply(reply)
        tickWriter?.endReply(nil)
    }

    /// Writes a line of the tick stream that the control loop produces (the `Presented`
    /// of a frame a newer `Present` replaced): to the tick socket if the connection has
    /// one, after the reply in progress, so that every `Presented` comes where the ticks do.
    func writeTickLine(_ buffer: ByteBuffer) {
        if let tickWriter {
            tickWriter.writeTicks(buffer)
        } else {
            writer.write(buffer)
        }
    }

    /// Writes whole lines to the connection (through the writer: ordered with the ticks).
    func write(_ buffer: ByteBuffer) {
        writer.write(buffer)
    }
}

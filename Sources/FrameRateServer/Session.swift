#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import NIOCore

/// One client connection as the core sees it: its owner id, the kernel's
/// credentials, the links and watches it holds, and its outbound state.
/// Confined to the compositor's event loop.
final class Session {
    // The fields the vsync reads for every connection come first, so they share the
    // object's first cache line: at 1,000 connections a vsync touches 1,000 sessions,
    // and a miss per field was a measurable share of the fan-out.

    /// The model's name for this connection.
    let owner: OwnerID
    /// The connection's socket when the daemon accepted it itself (``Acceptor``): ticks are
    /// then sent on it directly, without NIO's outbound path, whenever NIO holds nothing
    /// unwritten for the connection. `nil` for channels made otherwise (tests).
    let descriptor: Int32?
    /// Whether ``tickBuffer`` holds ticks of the current vsync that are not written yet.
    var hasPendingTicks = false
    /// Whether the connection takes more outbound bytes (below its high-water mark): the
    /// channel's writability, cached when it changes so the vsync path reads a stored Bool
    /// instead of going through the channel.
    private(set) var isWritable: Bool
    /// Writes handed to NIO that have not completed yet. While there are any, ticks go
    /// through NIO too, behind them, so the connection's bytes stay in order.
    private(set) var writesInNIO = 0
    /// `links.count`, kept beside the other hot fields.
    private(set) var linkCount = 0
    /// Set when the connection closed. NIO closes the socket just before it reports the
    /// close; from then on the descriptor number may belong to a new connection (the
    /// acceptor thread may be handed it at once), so nothing is sent on it again.
    var isClosed = false
    /// The buffer the ticks of a connection holding several links are collected in at
    /// each vsync. Reused from one vsync to the next: a write that completes at once
    /// releases NIO's reference, so clearing it finds the storage unshared and allocates nothing.
    var tickBuffer: ByteBuffer

    /// Who is connected.
    let peer: PeerCredentials
    /// The session handler's context: replies (and ticks NIO must queue) are written
    /// from here, so they skip the rest of the pipeline.
    let context: ChannelHandlerContext
    /// Links this connection holds, with the display each is on.
    var links: [LinkID: DisplayID] = [:] {
        didSet { linkCount = links.count }
    }
    /// Watches this connection holds.
    var watches: Set<UInt64> = []
    /// Fires when the connection has stayed unwritable too long.
    var unwritableDeadline: Scheduled<Void>?
    /// How many of this connection's rejected requests still get a log line (``RejectionLogLimiter``).
    var rejectionLog = SessionRejectionLog()

    init(owner: OwnerID, peer: PeerCredentials, context: ChannelHandlerContext, descriptor: Int32? = nil) {
        self.owner = owner
        self.peer = peer
        self.context = context
        self.descriptor = descriptor
        self.isWritable = context.channel.isWritable
        self.tickBuffer = context.channel.allocator.buffer(capacity: 256)
    }

    /// Re-reads the channel's writability (on `channelWritabilityChanged`).
    /// - Returns: whether it changed.
    func refreshWritability() -> Bool {
        let now = context.channel.isWritable
        defer { isWritable = now }
        return now != isWritable
    }

    /// Starts this vsync's ticks: empties ``tickBuffer`` (keeping its storage).
    func beginTicks() {
        tickBuffer.clear()
        hasPendingTicks = true
    }

    /// Writes this vsync's collected ticks (``tickBuffer``), all in one write.
    func flushTicks() {
        hasPendingTicks = false
        send(tickBuffer)
    }

    /// Writes `bytes` (whole tick lines) to the connection.
    ///
    /// With a ``descriptor`` and nothing queued in NIO, the bytes go straight to the
    /// socket with one non-blocking `send` (the 120 Hz path: one system call and no
    /// pipeline traversal, promise or pending-write bookkeeping per connection). Whatever
    /// the kernel does not take (a full socket buffer, an error) is handed to NIO, which
    /// queues it, counts it against the high-water mark and reports errors as usual.
    /// The caller may reuse its buffer at once: NIO keeps its own reference.
    func send(_ bytes: ByteBuffer) {
        guard !isClosed else { return }
        guard let descriptor else {
            context.writeAndFlush(NIOAny(bytes), promise: nil)
            return
        }
        var rest = bytes
        if writesInNIO == 0 {
            let sent = bytes.withUnsafeReadableBytes { raw in
                Glibc.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
            if sent == bytes.readableBytes { return }
            if sent > 0 { rest.moveReaderIndex(forwardBy: sent) }
        }
        write(rest)
    }

    /// Writes one complete line (or several) through NIO and flushes.
    /// - Returns: a future that completes when the bytes are written (or failed).
    @discardableResult
    func write(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        guard descriptor != nil else {
            context.writeAndFlush(NIOAny(buffer), promise: promise)
            return promise.futureResult
        }
        writesInNIO += 1
        context.writeAndFlush(NIOAny(buffer), promise: promise)
        // A strong capture (until the write completes): a weak reference would move the
        // session's reference count to a side table and slow every retain on the tick path.
        promise.futureResult.assumeIsolated().whenComplete { _ in self.writesInNIO -= 1 }
        return promise.futureResult
    }
}

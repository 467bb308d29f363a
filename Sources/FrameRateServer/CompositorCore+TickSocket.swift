import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging

/// A connection's tick socket: a second connection to the daemon that carries only the
/// first one's Tick and Presented lines, and that the daemon never reads.
///
/// Why: a socket the daemon reads has a waiter on its wait queue (NIO's epoll entry), and
/// every tick a client reads frees buffer space on the daemon's end, which wakes that
/// waiter in the client's `read`. Measured on framebench at 2,000 links, that wake-up is
/// 5–10 % of the client's CPU per tick (docs/performance-log.md, 2026-12-02). The tick
/// socket's daemon end sits in no epoll set (the tick plane watches it for `EPOLLOUT`
/// only while bytes are queued), so reading a tick there wakes nobody. Android's
/// Choreographer receives vsync the same way, on a dedicated socket from SurfaceFlinger.
///
/// How: `Open` on the connection gives a token; a new connection of the same user sends
/// `Attach` with it as its first request. The daemon keeps a duplicate of that socket as
/// the first connection's ``Session/tickWriter`` (taking over its word in the fan-out's
/// ``TickGates``), answers `Attach`, and closes its own reading side of it (NIO's
/// channel), which unregisters it from NIO's epoll set. Both happen before the first
/// connection's first `Register`, so the fan-out never claimed its socket before.
extension CompositorCore {
    /// `TickSocket/Open`: a token for `Attach` (a new one replaces one not used yet).
    func openTickSocket(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        _ = try ParamReader(params, allowed: [])
        guard session.tickWriter == nil else {
            throw .status(.failedPrecondition, "this connection already has a tick socket")
        }
        guard !session.hasRegisteredLinks else {
            throw .status(
                .failedPrecondition,
                "this connection has sent a Register (its links' ticks come on it): open the tick socket before its first Register"
            )
        }
        if let unused = session.tickSocketToken { tickSocketTokens[unused] = nil }
        let token = Self.makeTickSocketToken()
        session.tickSocketToken = token
        tickSocketTokens[token] = session.owner
        return OpenTickSocketResult(token: token).jsonValue
    }

    /// `TickSocket/Attach`: `session` becomes the tick socket of the connection whose
    /// `Open` returned the token. Its reply is the last line written through `session`'s
    /// own writer; the session handler then closes the connection's reading side.
    func attachTickSocket(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try AttachTickSocketRequest(params: params)
        // Its first request (lines that were no request, answered with an error, do not
        // count) and nothing queued: this reply goes into the socket whole before any
        // tick can (the line is not paused after Attach, see continueLine).
        guard session.handledRequests == 1, !session.hasRegisteredLinks, session.watches.isEmpty, session.tickWriter == nil,
            session.tickSocketToken == nil, session.writer.queuedBytes == 0
        else {
            throw .status(
                .failedPrecondition,
                "Attach must be a new connection's first request: this connection has already made others; connect again and send Attach first"
            )
        }
        guard let owner = tickSocketTokens[request.token], let target = sessions[owner], target !== session,
            target.peer.uid == session.peer.uid
        else {
            throw .status(
                .notFound,
                "no open connection of uid \(session.peer.uid) holds this token (it was used already, replaced by a newer Open, or its connection closed)"
            )
        }
        guard !target.hasRegisteredLinks else {
            throw .status(
                .failedPrecondition,
                "the connection that opened this token has sent a Register since (its links' ticks come on it): open the tick socket before its first Register"
            )
        }
        guard let own = session.descriptor else {
            throw .status(.failedPrecondition, "this connection has no socket of its own to become a tick socket")
        }
        let descriptor: Int32
        do {
            descriptor = try SystemCall.duplicate(own)
        } catch {
            throw .status(.resourceExhausted, "framerated has no file descriptor left for a tick socket (\(error)); ticks keep coming on the first connection")
        }
        tickSocketTokens[request.token] = nil
        target.tickSocketToken = nil
        installTickSocket(descriptor, on: target)
        session.becameTickSocket = true
        logger.debug("tick socket attached", metadata: peerMetadata(target.peer).merging(["event": "tick-socket-attached"]) { $1 })
        return ["attached": true]
    }

    /// Makes `descriptor` (owned from now on) the tick socket of `session`: its writer
    /// takes the connection's word in the fan-out's gates and its place in the writers the
    /// tick plane sends to; the connection's own writer keeps the replies.
    func installTickSocket(_ descriptor: Int32, on session: Session) {
        let owner = session.owner
        let writer = SocketWriter(
            destination: .socket(descriptor), highWater: configuration.limits.outboundHighWater,
            gate: shared.gates.gate(slot: owner.tickGate.slot, tag: owner.tickGate.tag),
            observer: writerObserver(of: owner, pausesReads: false)
        )
        // A line of the connection may be half run (a batch paused between turns): the
        // tick writer holds ticks for its reply too, so each endReply finds its begin.
        for _ in 0..<session.repliesInProgress { writer.beginReply() }
        session.tickWriter = writer
        session.tickDescriptor = descriptor
        shared.update { $0.moveTicks(of: owner, to: writer) }
    }

    /// 128 random bits as 32 lowercase hexadecimal digits.
    private static func makeTickSocketToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next() as UInt64, generator.next() as UInt64]
        return words.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }
}

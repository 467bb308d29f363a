import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore

/// The per-connection channel handler on the control loop: queues each framed line,
/// handles a bounded number per turn of the loop, and stops reading while the connection
/// does not read its replies.
///
/// The bounds, which keep one connection from monopolising the control loop:
/// - at most ``ServerConfiguration/Limits/requestsPerTurn`` lines, and at most
///   ``turnBudget`` of work, are handled before the loop serves other connections; the
///   rest wait ``continuationDelay`` (NIO runs every due task before it polls again, so a
///   continuation due at once would starve the other connections' reads). Resuming after
///   the connection drained its replies goes through the same delayed continuation, never
///   straight from the task that reports the drain;
/// - a batch is executed between those checks too: when the budget runs out in the middle
///   of one, the rest of its messages wait for the connection's next turn
///   (``LineInProgress``), and its reply is written once all have run;
/// - an unprivileged user over its share of the loop's time or its reply rate
///   (``UserPacing``, across all its connections) has its next request wait until that is
///   paid off; each request is charged the loop time it took and the reply bytes it made;
/// - while the connection's writer is above its high-water mark (the client is not
///   reading), no request is handled and nothing more is read: the kernel's socket
///   buffer, then the client's own `send`, absorb the flood; and while an unprivileged
///   user has ``UnreadReplyLimit/limit`` other connections holding a reply back (unread
///   above the mark, or a batch paused between turns whose reply is still to come), this
///   one's next request waits too (``UnreadReplyLimit``), so its replies cannot pile up;
/// - reads are paused while lines are queued, so the queue holds at most one read's worth.
final class SessionHandler: ChannelDuplexHandler {
    typealias InboundIn = NDJSONFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long queued requests wait so that other connections are read first.
    static let continuationDelay = TimeAmount.microseconds(50)
    /// The most time one connection's requests take in one turn (the request that crosses
    /// it finishes; the rest wait for the next turn).
    static let turnBudget = Duration.milliseconds(2)

    private let core: CompositorCore
    private let peer: PeerCredentials
    private let destination: @Sendable (ChannelHandlerContext) -> SocketWriter.Destination
    private var session: Session?
    /// Lines read and not yet handled.
    private var queue = CircularBuffer<NDJSONFrame>(initialCapacity: 4)
    /// The line being handled, when its messages span turns of the loop (a batch that
    /// outlasted a turn's budget); it goes on before anything else of this connection.
    private var lineInProgress: LineInProgress?
    /// A read NIO asked for while paused; issued on resume.
    private var readWanted = false
    private var continuationScheduled = false
    /// The peer shut its sending side: once the queue is handled, close if it holds nothing.
    private var inputClosed = false
    /// Set once an oversized line was answered: nothing more is handled.
    private var closing = false
    /// Set once the connection is being handed to the next daemon: nothing more is handled or read.
    private var handingOver = false
    /// The decoder's handover mode and leftovers (`nil`: a plain decoder, as in tests).
    private let input: HandoverInput?
    /// The previous daemon's record of this connection, when it was handed over.
    private let adopting: HandoverSession?

    /// - Parameters:
    ///   - destination: where the connection's bytes go (its socket; a channel sink in tests).
    ///   - input: shared with the pipeline's ``HandoverLineDecoder``, so a handover keeps a partial line.
    ///   - adopting: the previous daemon's record, for a connection it handed over.
    init(
        core: CompositorCore, peer: PeerCredentials, destination: @escaping @Sendable (ChannelHandlerContext) -> SocketWriter.Destination,
        input: HandoverInput? = nil, adopting: HandoverSession? = nil
    ) {
        self.core = core
        self.peer = peer
        self.destination = destination
        self.input = input
        self.adopting = adopting
    }

    func channelActive(context: ChannelHandlerContext) {
        if let adopting {
            session = core.adopt(adopting, peer: peer, context: context, destination: destination(context))
        } else {
            session = core.open(peer: peer, context: context, destination: destination(context))
        }
        guard let session else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        session.resume = { loopBound.value.0.scheduleContinuation(context: loopBound.value.1) }
        session.handOver = { loopBound.value.0.handOver(context: loopBound.value.1) }
        session.finishLine = {
            guard let session = loopBound.value.0.session else { return }
            _ = loopBound.value.0.continueLineInProgress(of: session, pausingWhen: { false })
            // The line finished here may be the one whose Attach made this a tick socket.
            if session.becameTickSocket { loopBound.value.0.closeAsTickSocket(context: loopBound.value.1, session: session) }
        }
        context.fireChannelActive()
        if let pending = adopting?.pendingInput, !pending.isEmpty {
            // What the previous daemon read and did not handle, as if just read: through
            // the whole pipeline (partial-line timer, decoder), before any new read.
            var buffer = context.channel.allocator.buffer(capacity: pending.count)
            buffer.writeBytes(pending)
            context.channel.pipeline.syncOperations.fireChannelRead(NIOAny(buffer))
            context.channel.pipeline.fireChannelReadComplete()
        }
    }

    /// Stops reading and handling for a handover.
    /// - Returns: the lines queued and the decoder's partial line, as bytes; `nil` when the
    ///   connection is being closed anyway.
    private func handOver(context: ChannelHandlerContext) -> EventLoopFuture<[UInt8]?> {
        guard !closing, !inputClosed else { return context.eventLoop.makeSucceededFuture(nil) }
        // The core finished any line in progress first (``Session/finishLine``).
        assert(lineInProgress == nil, "a line in progress at a handover")
        handingOver = true
        var pending: [UInt8] = []
        for case .line(let line) in queue {
            pending += line.readableBytesView
            pending.append(UInt8(ascii: "\n"))
        }
        queue.removeAll()
        let queued = pending
        let channel = context.channel
        let stopped = channel.setOption(ChannelOptions.autoRead, value: false)
        guard let input else { return stopped.map { queued } }
        input.isHandingOver = true
        // The callbacks run on this channel's loop (futures of its own channel), which owns `input`.
        let boundInput = NIOLoopBound(input, eventLoop: context.eventLoop)
        return stopped.flatMap {
            // Removing the decoder hands its buffered bytes to `input` (handover mode).
            do {
                let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HandoverLineDecoder>.self)
                return channel.pipeline.syncOperations.removeHandler(decoder)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.map {
            queued + boundInput.value.leftover
        }.recover { _ in
            nil
        }
    }

    /// Queues the line. The decoder hands over every line of one read in a row, so lines
    /// are handled once the read is complete (``channelReadComplete(context:)``), within
    /// one budget for the whole read, not one budget per line.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard session != nil, !closing, !handingOver else { return }
        queue.append(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        drain(context: context)
        context.fireChannelReadComplete()
    }

    /// Handles queued lines within this turn's budget; schedules the rest or resumes reading.
    private func drain(context: ChannelHandlerContext) {
        guard let session, !closing, !handingOver else { return }
        if session.writer.isClosed {
            // The peer is gone (a send failed): nothing it asked for can be answered.
            abandonLines(of: session)
            closing = true
            Self.closeOnALaterTurn(context.channel)
            return
        }
        var budget = core.configuration.limits.requestsPerTurn
        let started = core.wallNow()
        // A virtual-clock daemon never pauses a line: time may move only between lines, so
        // where a batch paused would depend on the wall clock and change what it sees.
        let turnOver = { !self.core.isVirtualClock && started.duration(to: self.core.wallNow()) >= Self.turnBudget }
        while true {
            if lineInProgress == nil {
                guard budget > 0, session.isWritable, !turnOver(), let frame = queue.first else { break }
                if case .line = frame {
                    if let delay = core.pacingDelay(of: session) {
                        // Over its user's share: the rest waits (and nothing more is read) until paid off.
                        let wait = WireTime.nanoseconds(of: delay)
                        scheduleContinuation(context: context, after: .nanoseconds(max(wait, Self.continuationDelay.nanoseconds)))
                        return
                    }
                    // Too many of its user's connections hold unread replies (or lines paused
                    // mid-batch): the core resumes this one when one of them reads or closes.
                    if core.mustWaitForUnreadReplies(session) { return }
                }
                queue.removeFirst()
                budget -= 1
                switch frame {
                case .line(let line):
                    session.beginReply()
                    lineInProgress = core.beginLine(line)
                case .oversized(let limit):
                    closing = true
                    queue.removeAll()
                    core.rejectOversizedLine(limit: limit, from: session)
                    let error = JSONRPCOutboundMessage.response(
                        id: nil, result: .failure(.invalidRequest(detail: "line longer than \(limit) bytes; the connection is closed"))
                    )
                    var buffer = context.channel.allocator.buffer(capacity: 256)
                    error.writeLine(into: &buffer)
                    session.write(buffer)
                    closeWhenDrained(context: context, session: session)
                    return
                }
            }
            // A line begun runs on whatever the connection's writer says, as it did when a
            // line ran in one piece: its work is bounded by the batch limit, and its reply
            // is queued like any other. At least one of its messages runs per turn.
            guard continueLineInProgress(of: session, pausingWhen: turnOver) else { break }
            if session.becameTickSocket {
                closeAsTickSocket(context: context, session: session)
                return
            }
        }
        if lineInProgress != nil || !queue.isEmpty {
            // Over budget: let the loop serve others first. Unwritable: wait for the resume.
            if lineInProgress != nil || session.isWritable { scheduleContinuation(context: context) }
            return
        }
        if inputClosed {
            closeIfIdle(context: context, session: session)
            return
        }
        if readWanted && session.isWritable {
            readWanted = false
            context.read()
        }
    }

    /// Runs the line in progress until it is finished or `shouldPause` says to stop (asked
    /// after each message), charges its user the loop time, and once it is finished writes
    /// its reply (with the ticks held back meanwhile).
    /// - Returns: whether the line is finished.
    private func continueLineInProgress(of session: Session, pausingWhen shouldPause: () -> Bool) -> Bool {
        guard var line = lineInProgress else { return true }
        lineInProgress = nil
        let began = core.wallNow()
        let (finished, reply) = core.continueLine(&line, from: session, pausingWhen: shouldPause)
        if finished {
            session.endReply(reply)
        } else {
            lineInProgress = line
        }
        // A line paused will write its reply later: it counts against its user's unread
        // replies meanwhile, as a finished one does while its writer is above the mark.
        core.noteReplyPending(session, lineInProgress: !finished)
        core.charge(session, loopTime: began.duration(to: core.wallNow()), replyBytes: reply?.readableBytes ?? 0)
        core.virtualTimeMayAdvance()
        return finished
    }

    /// Drops the queued lines and the line in progress (its reply is never written).
    private func abandonLines(of session: Session?) {
        queue.removeAll()
        if lineInProgress != nil {
            lineInProgress = nil
            session?.endReply(nil)
            if let session { core.noteReplyPending(session, lineInProgress: false) }
        }
    }

    /// Handles the queue again `delay` from now (once, however often asked: a drain that
    /// runs early finds what it must still wait for and asks again).
    private func scheduleContinuation(context: ChannelHandlerContext, after delay: TimeAmount = continuationDelay) {
        guard !continuationScheduled else { return }
        continuationScheduled = true
        context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.continuationScheduled = false
            self.drain(context: context)
        }
    }

    /// Reads only when every queued line is handled and replies can be written.
    func read(context: ChannelHandlerContext) {
        guard !handingOver else { return }
        guard let session, queue.isEmpty, lineInProgress == nil, session.isWritable else {
            readWanted = true
            return
        }
        context.read()
    }

    /// The client shut down its sending side (e.g. `printf '…\n' | nc -U`). Once every line
    /// it sent is answered, a connection holding no link and no watch has nothing more to
    /// receive, so it is closed. One that holds links keeps receiving ticks until it closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let timedOut = event as? PartialLineTimeoutHandler.PartialLineTimedOut, let session, !closing {
            closing = true
            abandonLines(of: session)
            core.rejectPartialLine(timeout: timedOut.timeout, from: session)
            var buffer = context.channel.allocator.buffer(capacity: 256)
            JSONRPCOutboundMessage.response(
                id: nil,
                result: .failure(.invalidRequest(detail: "a request line took longer than \(timedOut.timeout) to arrive; the connection is closed"))
            ).writeLine(into: &buffer)
            session.write(buffer)
            closeWhenDrained(context: context, session: session)
            return
        }
        if case ChannelEvent.inputClosed = event, let session {
            inputClosed = true
            // A last line without `\n` arrives with the end of stream, without a read-complete.
            if queue.isEmpty && lineInProgress == nil {
                closeIfIdle(context: context, session: session)
            } else {
                drain(context: context)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func closeIfIdle(context: ChannelHandlerContext, session: Session) {
        let holdsLinks = core.shared.read { $0.compositor.linkCount(of: session.owner) } > 0
        if !holdsLinks && session.watches.isEmpty { closeWhenDrained(context: context, session: session) }
    }

    /// The connection became another's tick socket (`TickSocket/Attach`): its Attach reply
    /// was its last line, nothing more is read or handled, and NIO's channel closes once
    /// the reply is in the kernel, which takes the socket out of NIO's epoll set (the
    /// other connection's tick writer keeps it open).
    private func closeAsTickSocket(context: ChannelHandlerContext, session: Session) {
        guard !closing else { return }
        closing = true
        queue.removeAll()
        closeWhenDrained(context: context, session: session)
    }

    /// Closes the connection once every reply written to it is in the kernel.
    private func closeWhenDrained(context: ChannelHandlerContext, session: Session) {
        let channel = context.channel
        session.writer.whenDrained { Self.closeOnALaterTurn(channel) }
    }

    /// Closes `channel` on a later turn of its loop, never from inside NIO's read cycle. At
    /// the end of input NIO calls `channelReadComplete` and then half-closes the input
    /// (`close0(mode: .input)`), which assumes the channel is still registered: a full close
    /// from inside that callout (``drain(context:)`` runs there) would be followed by a
    /// half-close of an unregistered channel, an assertion failure in NIO's debug builds.
    /// A client killed between two ticks, with nothing left unread, led there.
    private static func closeOnALaterTurn(_ channel: any Channel) {
        channel.eventLoop.execute { channel.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        abandonLines(of: session)
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

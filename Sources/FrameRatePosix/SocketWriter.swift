#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import NIOCore
import Synchronization
import CFrameRatePosix

/// Every byte framerated sends to one client connection: tick lines from the fan-out
/// threads and replies from the control loop, in the order they were written, whole lines
/// only, never on a descriptor after it was closed.
///
/// The invariants, and why they hold:
/// - **One writer at a time.** Every send and every change of the queue happens under
///   ``state``'s lock, so two threads never interleave bytes on the socket.
/// - **Order.** A write goes straight to the socket (one non-blocking `send`) only while
///   nothing is queued; otherwise it is appended to the queue. What a `send` leaves over is
///   queued before the lock is released, so later bytes always follow it.
/// - **No loss on a partial send.** The remainder is queued and sent by ``flush()``
///   when the socket is writable again (the owner watches for that, see ``Observer``).
/// - **No write after close.** The writer owns its descriptor (a duplicate of the one NIO
///   reads from: NIO closes its own in `close0` before `channelInactive`, so a shared
///   number could be reused by a new connection before the session learns of the close).
///   ``close()`` marks the writer closed and closes the descriptor under the lock; every
///   send checks the mark under the same lock, so a reused number is never written.
/// - **Batched tick sends.** A fan-out thread may *claim* the socket (``claimForTicks()``),
///   send outside the lock (in one io_uring submission with other connections' sends), and
///   *land* the outcome (``landTicks(_:of:)``). While claimed, every other write queues, a
///   flush waits for the landing, and a close defers releasing the descriptor to the landing;
///   the landing puts an unsent remainder at the head of the queue. So order, whole lines and
///   no-write-after-close hold across the unlocked send too.
/// - **Claims without the lock.** A writer with a gate (its word in ``TickGates``) lets the
///   fan-out claim and land through the word alone while it is ``TickGates/open``: nothing
///   queued, no reply in progress, not closed. Before the writer sends or closes the
///   descriptor itself it clears `open` and learns, in the same atomic step, whether a
///   claim is in flight; if one is, it queues (or defers the close) exactly as for a claim
///   through the lock, and that landing comes through ``landTicks(_:of:)``.
public final class SocketWriter: Sendable {

    /// Where the bytes go.
    public enum Destination: Sendable {
        /// A connected stream socket the writer owns (and closes).
        case socket(Int32)
        /// A function taking whole lines (tests: an embedded channel); never partial.
        case sink(@Sendable (ByteBuffer) -> Void)
    }

    /// Told when the writer needs attention; called with the writer's lock held, so it
    /// must not block nor call back into the writer.
    public struct Observer: Sendable {
        /// The queue went over the high-water mark (`true`) or drained below the low-water mark (`false`).
        public var writabilityChanged: @Sendable (_ writable: Bool) -> Void
        /// Bytes are queued: call ``flush()`` once the descriptor is writable.
        public var needsFlush: @Sendable (_ descriptor: Int32) -> Void
        /// The queue drained: stop watching the descriptor until the next ``needsFlush``.
        /// (A watch left in place keeps a waiter on the socket, which every read of the
        /// peer then wakes.)
        public var drained: @Sendable (_ descriptor: Int32) -> Void
        /// The writer closed its descriptor: stop watching it.
        public var closing: @Sendable (_ descriptor: Int32) -> Void
        /// A send failed (`EPIPE`, `ECONNRESET`, …), once: nothing more can reach the peer,
        /// and the writer discards what it is given, so the owner must close the connection.
        /// The peer may still be sending (it shut down only its reading side), so its
        /// readable side says nothing of this.
        public var failed: @Sendable (_ errno: Int32) -> Void

        /// Builds an observer.
        public init(
            writabilityChanged: @escaping @Sendable (Bool) -> Void = { _ in },
            needsFlush: @escaping @Sendable (Int32) -> Void = { _ in },
            drained: @escaping @Sendable (Int32) -> Void = { _ in },
            closing: @escaping @Sendable (Int32) -> Void = { _ in },
            failed: @escaping @Sendable (Int32) -> Void = { _ in }
        ) {
            self.writabilityChanged = writabilityChanged
            self.needsFlush = needsFlush
            self.drained = drained
            self.closing = closing
            self.failed = failed
        }
    }

    /// What a write did.
    public enum WriteOutcome: Equatable, Sendable {
        /// Every byte is in the kernel.
        case sent
        /// Some bytes wait in the queue (the writer flushes them when the socket drains).
        case queued
        /// The writer is closed or its connection failed: the bytes were discarded.
        case discarded
    }

    /// The fields a claim and a landing through the lock read (``claimForTicks()``,
    /// ``landTicks(_:of:)``) come first, next to the lock, so that they share its cache lines.
    private struct State {
        /// A fan-out thread is sending ticks on the descriptor outside the lock
        /// (``claimForTicks()``): for a writer without a gate (with one, the mark is in its word).
        var ticksInFlight = false
        var failed = false
        var writable = true
        /// Replies being produced (``beginReply()`` without its ``endReply(_:)`` yet).
        var repliesInProgress = 0
        /// The io_uring whose file table holds the descriptor (slot = descriptor number); the
        /// slot is emptied before the descriptor is closed.
        var registeredIn: SendRing?
        /// ``close()`` came while ticks were in flight: the descriptor to close when they land.
        var closeAfterLanding: Int32?
        var destination: Destination?
        var queue: ByteBuffer?
        /// Called once the queue is empty (see ``whenDrained(_:)``).
        var drained: (@Sendable () -> Void)?
        /// Tick lines written meanwhile, sent right after the reply.
        var heldTicks: ByteBuffer?
        /// Bytes moved to compact the queue so far (see ``compactIfPaidFor(_:)``).
        var compactedBytes = 0
    }

    /// What a fan-out thread may do with this vsync's tick lines (``claimForTicks()``).
    public enum TickClaim: Equatable, Sendable {
        /// Send them to this descriptor now, outside the lock, then ``landTicks(_:of:)``;
        /// `registered`: the descriptor is in the sending ring's file table already.
        case socket(Int32, registered: Bool)
        /// Hand them to ``writeTicks(_:)``: they must queue (bytes are queued, a reply is in
        /// progress) or the destination is not a socket.
        case indirect
        /// The writer is closed or failed: drop them.
        case closed
    }

    // Stored properties in the order the fan-out reads them (see `State`).
    private let state: Mutex<State>
    private let observer: Observer
    /// Queued bytes above which the connection counts as unwritable.
    public let highWater: Int
    /// The connection's word in the fan-out's table (``TickGates``): with one, a fan-out
    /// thread claims the socket through the word while ``TickGates/open`` is set, without
    /// this writer's lock, and the claim's in-flight mark lives there instead of in `State`.
    private let gate: TickGate?

    /// A writer for `destination`.
    /// - Parameters:
    ///   - highWater: queued bytes above which ``Observer/writabilityChanged`` reports `false`;
    ///     it reports `true` again when the queue is empty.
    ///   - gate: the connection's word in the fan-out's table, if it has one (a socket only).
    public init(destination: Destination, highWater: Int, gate: TickGate? = nil, observer: Observer = Observer()) {
        self.state = Mutex(State(destination: destination))
        self.highWater = highWater
        self.observer = observer
        if case .socket(let descriptor) = destination, let gate {
            let installed = gate.installed(descriptor: descriptor)
            self.gate = installed
            installed.reopen()
        } else {
            self.gate = nil
        }
    }

    /// Whether a fan-out claim of the socket is in flight (through the gate or the lock).
    private func isInFlight(_ state: borrowing State) -> Bool {
        gate?.isInFlight ?? state.ticksInFlight
    }

    /// Before the writer sends or closes the descriptor itself: stops unlocked claims.
    /// - Returns: whether a claim is in flight (then the writer must queue or defer).
    private func stopUnlockedClaims(_ state: borrowing State) -> Bool {
        guard let gate else { return state.ticksInFlight }
        return gate.close()
    }

    /// Allows unlocked claims again if nothing stands in their way: a socket, not failed,
    /// nothing queued, no reply in progress (and no claim in flight: its landing reopens).
    private func reopenIfIdle(_ state: borrowing State) {
        guard let gate, case .socket? = state.destination, !state.failed, state.repliesInProgress == 0,
            (state.queue?.readableBytes ?? 0) == 0
        else { return }
        gate.reopen()
    }

    /// Whether the queue is below the high-water mark.
    public var isWritable: Bool { state.withLock { $0.writable } }

    /// Bytes waiting in the queue.
    public var queuedBytes: Int { state.withLock { $0.queue?.readableBytes ?? 0 } }

    /// Bytes moved so far to compact the queue: at most the bytes sent (tests check the
    /// amortized bound).
    var compactedBytes: Int { state.withLock { $0.compactedBytes } }

    /// Whether ``close()`` was called or the connection failed.
    public var isClosed: Bool { state.withLock { $0.destination == nil || $0.failed } }

    /// Writes whole lines: straight to the socket when nothing is queued, else behind the queue.
    @discardableResult
    public func write(_ bytes: ByteBuffer) -> WriteOutcome {
        state.withLock { write(bytes, state: &$0) }
    }

    private func write(_ bytes: ByteBuffer, state: inout State) -> WriteOutcome {
        guard let destination = state.destination, !state.failed else { return .discarded }
        switch destination {
        case .sink(let sink):
            sink(bytes)
            return .sent
        case .socket(let descriptor):
            let inFlight = stopUnlockedClaims(state)
            if !inFlight && (state.queue == nil || state.queue!.readableBytes == 0) {
                let outcome = bytes.withUnsafeReadableBytes { SystemCall.send(descriptor, $0) }
                switch outcome {
                case .complete:
                    reopenIfIdle(state)
                    return .sent
                case .failed(let errno):
                    fail(errno, state: &state)
                    return .discarded
                case .partial(let count):
                    var rest = bytes
                    rest.moveReaderIndex(forwardBy: count)
                    enqueue(rest, descriptor: descriptor, state: &state)
                    return .queued
                }
            }
            enqueue(bytes, descriptor: descriptor, state: &state)
            return .queued
        }
    }

    /// A send failed: nothing more can be sent, what is queued is dropped, and the
    /// observer hears of it (only here, so once: every send checks `failed` first).
    private func fail(_ errno: Int32, state: inout State) {
        state.failed = true
        state.queue = nil
        observer.failed(errno)
    }

    private func enqueue(_ bytes: ByteBuffer, descriptor: Int32, state: inout State) {
        let wasEmpty = (state.queue?.readableBytes ?? 0) == 0
        if state.queue == nil {
            state.queue = bytes
        } else {
            var incoming = bytes
            state.queue!.writeBuffer(&incoming)
        }
        if wasEmpty { observer.needsFlush(descriptor) }
        if state.writable && state.queue!.readableBytes > highWater {
            state.writable = false
            observer.writabilityChanged(false)
        }
    }

    /// Writes tick lines, unless a reply is being produced (``beginReply()``): then they
    /// wait and follow the reply. So a `Register` reply always precedes the link's first
    /// tick, and an `Update` reply the first tick at the new rate, although the tick
    /// plane may compute those ticks before the control loop has encoded the reply.
    @discardableResult
    public func writeTicks(_ bytes: ByteBuffer) -> WriteOutcome {
        state.withLock { state in
            guard state.repliesInProgress > 0, state.destination != nil else { return write(bytes, state: &state) }
            var incoming = bytes
            if state.heldTicks == nil { state.heldTicks = ByteBuffer() }
            state.heldTicks!.writeBuffer(&incoming)
            return .queued
        }
    }

    /// A request's handling starts: ticks written from now on wait for its reply.
    public func beginReply() {
        state.withLock { state in
            state.repliesInProgress += 1
            _ = stopUnlockedClaims(state)  // one in flight lands first: its lines precede the reply
        }
    }

    /// The request's reply (`nil`: a notification, nothing to answer): writes it, then the
    /// ticks held since ``beginReply()`` once no other reply is in progress.
    public func endReply(_ reply: ByteBuffer?) {
        state.withLock { state in
            if let reply { _ = write(reply, state: &state) }
            state.repliesInProgress -= 1
            guard state.repliesInProgress == 0 else { return }
            if let held = state.heldTicks {
                state.heldTicks = nil
                if held.readableBytes > 0 { _ = write(held, state: &state) }
            }
            reopenIfIdle(state)
        }
    }

    /// Sends what is queued, as far as the socket takes it (call when it is writable).
    /// - Returns: whether the queue is now empty.
    @discardableResult
    public func flush() -> Bool {
        state.withLock { flush(state: &$0) }
    }

    private func flush(state: inout State) -> Bool {
        if isInFlight(state) { return false }  // the landing flushes
        guard case .socket(let descriptor)? = state.destination, !state.failed, (state.queue?.readableBytes ?? 0) > 0
        else { return true }
        // The queue is changed in place (`state.queue!`), never through a copy: a copy would
        // share its storage, and compacting it would then duplicate the whole queue.
        let outcome = state.queue!.withUnsafeReadableBytes { SystemCall.send(descriptor, $0) }
        switch outcome {
        case .complete:
            state.queue!.clear()
        case .partial(let count):
            state.queue!.moveReaderIndex(forwardBy: count)
            Self.compactIfPaidFor(&state)
        case .failed(let errno):
            fail(errno, state: &state)
            if let drained = state.drained {
                state.drained = nil
                drained()
            }
            return true
        }
        let empty = state.queue!.readableBytes == 0
        if empty, let drained = state.drained {
            state.drained = nil
            drained()
        }
        if empty {
            observer.drained(descriptor)
            reopenIfIdle(state)
            if !state.writable {
                state.writable = true
                observer.writabilityChanged(true)
            }
        } else {
            observer.needsFlush(descriptor)
        }
        return empty
    }

    /// Moves the queue's unsent bytes to the front of its storage once the bytes sent
    /// before them are at least as many, never earlier. So every byte is moved at most as
    /// often as bytes were sent: compaction costs O(1) per byte sent, however large the queue
    /// and however little each `send` takes, and the dead prefix never exceeds the unsent
    /// bytes (memory stays under twice the queue). Compacting after every partial send, as
    /// this writer once did, moved the whole queue per send: a client reading 338 KB
    /// `GetState` replies a few KB at a time cost the flushing thread a copy of the whole
    /// queue per `send`, under the lock that the control loop's next reply waits for.
    private static func compactIfPaidFor(_ state: inout State) {
        let unsent = state.queue!.readableBytes
        guard state.queue!.readerIndex >= unsent else { return }
        state.compactedBytes += unsent
        state.queue!.discardReadBytes()
    }

    /// Claims the socket for this vsync's tick lines, to be sent outside the lock (see
    /// the type's invariants), when the unlocked claim through the writer's gate
    /// (``TickGates/claim(slot:tag:needsRegistration:)``) is not possible. The caller must
    /// call ``landTicks(_:of:)`` once for every `.socket` claim; while one is in flight,
    /// another claim is answered `.indirect`.
    public func claimForTicks() -> TickClaim {
        state.withLock { state in
            guard let destination = state.destination, !state.failed else { return .closed }
            guard case .socket(let descriptor) = destination, !isInFlight(state), state.repliesInProgress == 0,
                (state.queue?.readableBytes ?? 0) == 0
            else { return .indirect }
            if let gate { gate.beginSend() } else { state.ticksInFlight = true }
            return .socket(descriptor, registered: state.registeredIn != nil)
        }
    }

    /// The claimed descriptor was put in `ring`'s file table: empty the slot before closing it.
    func noteRegistered(in ring: SendRing) {
        state.withLock { state in
            // With a gate, the claim's mark may already be gone from the word: a newer
            // connection takes the slot as soon as this one is closed, even mid-send.
            precondition(gate != nil || state.ticksInFlight, "noteRegistered outside a claim")
            state.registeredIn = ring
            gate?.markRegistered()
        }
    }

    /// Closes the descriptor, first emptying its slot in a ring's file table (whose own
    /// reference to the socket would keep the connection open), and its gate.
    private func release(_ descriptor: Int32, state: inout State) {
        gate?.release()
        state.registeredIn?.unregister(descriptor)
        state.registeredIn = nil
        SystemCall.close(descriptor)
    }

    /// What the send of a claimed socket did with `bytes` (the lines it offered): queues the
    /// unsent remainder ahead of anything written meanwhile, flushes, and carries out a
    /// ``close()`` that came while the send was in flight. For a claim through the gate,
    /// the landing the fan-out could not make alone (``TickGates/landIfUnchanged(slot:claimed:)``).
    public func landTicks(_ outcome: SystemCall.SendOutcome, of bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            // With a gate, the mark may be gone from the word (see `noteRegistered(in:)`).
            precondition(gate != nil || state.ticksInFlight, "landTicks without a claim")
            if let gate {
                // Closed as the mark is cleared: a remainder queued below must not be
                // overtaken by an unlocked claim. Reopened at the end if nothing is queued.
                gate.endSend()
            } else {
                state.ticksInFlight = false
            }
            if let descriptor = state.closeAfterLanding {
                state.closeAfterLanding = nil
                release(descriptor, state: &state)
                return
            }
            guard case .socket(let descriptor)? = state.destination, !state.failed else { return }
            switch outcome {
            case .complete:
                break
            case .partial(let count):
                var remainder = ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: bytes[count...]))
                if var queued = state.queue, queued.readableBytes > 0 {
                    remainder.writeBuffer(&queued)
                }
                state.queue = nil
                enqueue(remainder, descriptor: descriptor, state: &state)
                return
            case .failed(let errno):
                fail(errno, state: &state)
            }
            // Replies written while the ticks were in flight were queued behind them.
            if flush(state: &state), let drained = state.drained {
                state.drained = nil
                drained()
            }
            reopenIfIdle(state)
        }
    }

    /// Calls `body` once every byte written so far is in the kernel (at once if nothing is
    /// queued, or if the connection failed or closed: then nothing more can be sent). It is
    /// called with the writer's lock held, on the thread that drained the queue.
    public func whenDrained(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.failed || state.destination == nil { return true }
            // Only a flush or a landing through the lock calls `drained`. With nothing
            // queued, a claim in flight could land without the writer (its word unchanged)
            // and the waiter would wait for ever: the gate is closed first, and the answer
            // of that same atomic step says whether a claim is still to land (one that
            // landed just before is not waited for).
            let inFlight = stopUnlockedClaims(state)
            if (state.queue?.readableBytes ?? 0) == 0 && !inFlight {
                reopenIfIdle(state)
                return true
            }
            state.drained = body
            return false
        }
        if now { body() }
    }

    /// Discards the queue and closes the descriptor; later writes are discarded. Idempotent.
    public func close() {
        state.withLock { state in
            guard let destination = state.destination else { return }
            state.destination = nil
            state.queue = nil
            if case .socket(let descriptor) = destination {
                observer.closing(descriptor)
                if stopUnlockedClaims(state) {
                    state.closeAfterLanding = descriptor  // still being sent on: released by landTicks
                } else {
                    release(descriptor, state: &state)
                }
            }
        }
    }
}

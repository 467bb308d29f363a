import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Histogram

/// The receive path of one worker's load connections, on FrameRateClient's low-level
/// layer, laid out for the tick path.
///
/// Each connection registers its links through its own ``LineSession`` (the synchronous
/// request helper). From then on a vsync brings one readiness on each of about a thousand
/// connections, and whatever a read touches of one connection has gone cold by the next
/// vsync. The C floor's reader touches one array element per connection. Reading through
/// each connection's own objects (session, socket, a 16 KiB buffer and a slot array, each
/// a heap object of its own) cost a cache miss and often a reference count apiece, and
/// made this reader's user-space time about four times the floor reader's
/// (`docs/performance.md`). So, after registration:
/// - every read goes into one ``LineBuffer`` of the worker's, through
///   ``ClientSocket/receive(fromSocket:into:)`` with the descriptor epoll reported;
/// - a connection's accounting is one element of an array indexed by descriptor, and its
///   links' slots are contiguous in one array for the whole worker;
/// - a line split across reads (rare: the daemon sends whole lines) waits in a
///   per-connection remainder, which goes back in front of the connection's next read.
///
/// Each Tick line is scanned in place with ``TickLineScanner``: no channel pipeline, no
/// `JSONValue`, no allocation per tick. The worker is one thread, so the arrays touched
/// per tick skip Swift's run-time exclusivity checks, as ``WorkerState``'s counters do.
final class ReceiveTable {
    /// One link's tally.
    struct Slot {
        var link: UInt64
        /// Ticks counted in the window.
        var received: UInt64 = 0
        var lastSequence: UInt64 = 0
    }

    /// One connection's place in the table.
    struct Connection {
        /// Its links' slots: `slots[slotStart ..< slotStart + slotCount]`.
        var slotStart = 0
        var slotCount = 0
        /// Ticks arrive in registration order: the slot after the last one's (an offset
        /// from `slotStart`) is checked first.
        var hint = 0
        /// Whether it is read (registered, not closed).
        var isOpen = false
        /// Whether ``ReceiveTable/remainders`` holds the start of a line for it.
        var hasRemainder = false
    }

    private let state: WorkerState
    /// Each connection by descriptor.
    @exclusivity(unchecked) private var connections: [Connection] = []
    /// Every link's slot, each connection's contiguous, in registration order.
    @exclusivity(unchecked) private(set) var slots: [Slot] = []
    /// The one buffer every read goes into; empty between two readinesses.
    @exclusivity(unchecked) private var buffer = LineBuffer(capacity: 65_536)
    /// The unfinished line a connection's last read ended with, by descriptor.
    private var remainders: [Int32: [UInt8]] = [:]
    /// The sessions, by descriptor: they own the sockets. The tick path does not touch them.
    private var sessions: [Int32: LineSession] = [:]
    /// The tick sockets, by their own descriptor (the one read): ``sessions`` holds the
    /// connection each belongs to under the same key.
    private var tickSockets: [Int32: LineSession] = [:]

    init(state: WorkerState) {
        self.state = state
    }

    /// Registers `links` links with `params` on `session` (blocking calls, one after the
    /// other) and puts the connection in the table, the socket its ticks come on (its
    /// `tickSocket`, else itself) made non-blocking. Ticks of its links that arrive on
    /// `session` meanwhile are accounted for as usual; on a tick socket they wait unread.
    /// - Returns: the session whose socket to watch for ticks.
    /// - Throws: what registering throws; the connection is then in the table but not read.
    @discardableResult
    func add(_ session: LineSession, tickSocket: LineSession? = nil, links: Int, params: JSONValue, deadline: Int64) throws -> LineSession {
        let reader = tickSocket ?? session
        let fd = reader.socket.descriptor
        let index = Int(fd)
        if index >= connections.count { connections.append(contentsOf: repeatElement(Connection(), count: index + 1 - connections.count)) }
        precondition(!connections[index].isOpen && sessions[fd] == nil, "descriptor \(fd) is in the table twice")
        connections[index] = Connection(slotStart: slots.count)
        sessions[fd] = session
        if let tickSocket { tickSockets[fd] = tickSocket }
        for _ in 0..<links { try register(on: session, at: index, params: params, deadline: deadline) }
        // Lines read after the last response wait in the session's own buffer (a tick
        // socket's buffer is empty: nothing read it yet).
        let now = System.monotonicNanoseconds()
        session.buffer.consumeLines { line in
            self.accept(line, on: index, receivedAt: now)
            return .next
        }
        if tickSocket == nil { keepRemainder(of: &session.buffer, for: fd) }
        try reader.socket.setNonBlocking(true)
        connections[index].isOpen = true
        return reader
    }

    /// Registers one link (a blocking call); ticks of the links already registered that
    /// arrive meanwhile are accounted for as usual.
    private func register(on session: LineSession, at index: Int, params: JSONValue, deadline: Int64) throws {
        // The daemon may send this link's first tick before its response: not unexpected.
        let reply = try session.call(.register, params: params, deadline: deadline) { line in
            self.accept(line, on: index, receivedAt: System.monotonicNanoseconds(), registering: true)
        }
        switch reply.result {
        case .success(let value):
            guard let status = try? LinkStatusResult(json: value) else {
                state.note("unexpected Register result \(value.jsonString)")
                return
            }
            // Connections register one after the other: this one's slots stay contiguous.
            precondition(connections[index].slotStart + connections[index].slotCount == slots.count)
            slots.append(Slot(link: status.link.rawValue))
            connections[index].slotCount += 1
            state.registeredLinks += 1
            state.callbackRateSum += status.callbackRate
        case .failure(let error):
            state.note("Register failed: \(error.message)")
        }
    }

    /// Drains the socket `fd` that the (edge-triggered) epoll set reported ready: one
    /// `recv`, the clock read once, every complete line accounted for; another `recv` only
    /// when the first filled the buffer (a shorter one took everything queued).
    /// - Returns: whether the connection is still open; when not, call ``close(_:)``.
    func receiveReady(_ fd: Int32) -> Bool {
        let index = Int(fd)
        guard index >= 0, index < connections.count, connections[index].isOpen else { return true }
        if connections[index].hasRemainder {
            connections[index].hasRemainder = false
            do {
                // At most a line's length, from a buffer with the same limit: it fits.
                try buffer.append(remainders.removeValue(forKey: fd) ?? [])
            } catch {
                state.note("connection error: \(error)")
                return discardBuffer()
            }
        }
        while true {
            let outcome: ReadOutcome
            do {
                outcome = try ClientSocket.receive(fromSocket: fd, into: &buffer)
            } catch {
                state.note("connection error: \(error)")
                return discardBuffer()
            }
            switch outcome {
            case .received:
                let now = System.monotonicNanoseconds()
                let more = buffer.isFull
                buffer.consumeLines { line in
                    self.accept(line, on: index, receivedAt: now)
                    return .next
                }
                if more { continue }
            case .wouldBlock:
                break
            case .endOfStream:
                return discardBuffer()
            }
            keepRemainder(of: &buffer, for: fd)
            return true
        }
    }

    /// Stops reading `fd` and closes its socket (the caller has taken it out of its epoll
    /// set); its links' tallies stay for the summary.
    func close(_ fd: Int32) {
        let index = Int(fd)
        guard index >= 0, index < connections.count else { return }
        connections[index].isOpen = false
        connections[index].hasRemainder = false
        remainders[fd] = nil
        sessions.removeValue(forKey: fd)?.socket.close()
        tickSockets.removeValue(forKey: fd)?.socket.close()
    }

    /// Moves the unfinished line left in `lines` (every complete one consumed) to `fd`'s remainder.
    private func keepRemainder(of lines: inout LineBuffer, for fd: Int32) {
        guard lines.bufferedByteCount > 0 else { return }
        remainders[fd] = lines.takeRemainder()
        connections[Int(fd)].hasRemainder = true
    }

    /// Empties the shared buffer after a failed or ended read.
    /// - Returns: `false`: the connection is done.
    private func discardBuffer() -> Bool {
        _ = buffer.takeRemainder()
        return false
    }

    /// Accounts for one line of the connection at `index`: a Tick of one of its links, else
    /// an unexpected line (except, while `registering`, a Tick of the link being registered).
    @inline(__always)
    private func accept(_ line: UnsafeRawBufferPointer, on index: Int, receivedAt now: Int64, registering: Bool = false) {
        guard let tick = TickLineScanner.scan(line) else {
            state.unexpectedLines += 1
            return
        }
        let connection = connections[index]
        var slot = connection.slotStart + (connection.hint < connection.slotCount ? connection.hint : 0)
        if connection.slotCount == 0 || slots[slot].link != tick.link {
            let own = slots[connection.slotStart..<(connection.slotStart + connection.slotCount)]
            guard let found = own.firstIndex(where: { $0.link == tick.link }) else {
                if !registering { state.unexpectedLines += 1 }
                return
            }
            slot = found
        }
        connections[index].hint = slot - connection.slotStart + 1
        let previous = slots[slot].lastSequence
        if previous != 0 && tick.sequence != previous &+ tick.skipped &+ 1 { state.sequenceErrors += 1 }
        slots[slot].lastSequence = tick.sequence
        guard tick.timestampNanoseconds >= state.windowStart, tick.timestampNanoseconds < state.windowEnd else { return }
        slots[slot].received += 1
        state.received += 1
        state.skipped += tick.skipped
        _ = state.latency.record(UInt64(max(now - tick.timestampNanoseconds, 1_000)))
    }
}

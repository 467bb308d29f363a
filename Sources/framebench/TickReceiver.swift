import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Histogram

/// Everything one worker process measures. The worker is one thread: no locks, and the
/// counters touched per tick skip Swift's run-time exclusivity checks (a measurable share
/// of the receive path): one thread, one access at a time.
final class WorkerState {
    /// Ticks whose `timestamp` lies in `[windowStart, windowEnd)` (nanoseconds on
    /// `CLOCK_MONOTONIC`) are counted; the window is empty until the parent says go.
    @exclusivity(unchecked) var windowStart: Int64 = .max
    @exclusivity(unchecked) var windowEnd: Int64 = .min
    /// Receipt time minus `timestamp` of every counted tick, nanoseconds.
    @exclusivity(unchecked) var latency = nanosecondHistogram()
    /// Counted ticks.
    @exclusivity(unchecked) var received: UInt64 = 0
    /// Sum of `skipped` over counted ticks.
    @exclusivity(unchecked) var skipped: UInt64 = 0
    /// Ticks whose sequence broke `sequence == previous + skipped + 1`.
    @exclusivity(unchecked) var sequenceErrors: UInt64 = 0
    /// Lines that were neither a Tick of one of our links nor a Register response.
    @exclusivity(unchecked) var unexpectedLines: UInt64 = 0
    /// Waits in the window that returned at least one ready socket.
    @exclusivity(unchecked) var wakeups: UInt64 = 0
    /// Connections that closed before the end.
    var disconnects = 0
    /// Register calls answered with a link.
    var registeredLinks = 0
    /// Sum of the registered links' callback rates, Hz.
    var callbackRateSum = 0.0
    /// Failures for people (register errors, connection errors), first few only.
    var errors: [String] = []
    /// Every connection's receiver.
    var receivers: [TickReceiver] = []

    func note(_ error: String) {
        if errors.count < 5 { errors.append(error) }
    }

    /// The worker's figures at the end of the run.
    func summary() -> WorkerSummary {
        var perLinkMinimum = UInt64.max
        var perLinkMaximum: UInt64 = 0
        for receiver in receivers {
            for slot in receiver.slots {
                perLinkMinimum = min(perLinkMinimum, slot.received)
                perLinkMaximum = max(perLinkMaximum, slot.received)
            }
        }
        var buckets: [(UInt64, UInt64)] = []
        for bucket in latency.recordedValues() { buckets.append((bucket.value, UInt64(bucket.count))) }
        return WorkerSummary(
            links: registeredLinks, callbackRateSum: callbackRateSum, received: received, skipped: skipped,
            sequenceErrors: sequenceErrors, unexpectedLines: unexpectedLines, wakeups: wakeups, disconnects: disconnects,
            perLinkMinimum: registeredLinks == 0 ? 0 : perLinkMinimum, perLinkMaximum: perLinkMaximum,
            latencyBuckets: buckets, errors: errors
        )
    }
}

/// The receive path of one load connection, on FrameRateClient's low-level layer: its
/// ``LineSession`` registers the links with the synchronous request helper, then, on each
/// readiness the worker's epoll set reports, ``receiveReady()`` does one `read` for as many
/// lines as are there, reads the clock once, and scans every Tick line in place with
/// ``TickLineScanner``: no channel pipeline, no `JSONValue`, no allocation per tick.
final class TickReceiver {
    /// One link of this connection.
    struct Slot {
        var link: UInt64
        var received: UInt64 = 0
        var lastSequence: UInt64 = 0
    }

    let session: LineSession
    private let state: WorkerState
    @exclusivity(unchecked) private(set) var slots: [Slot] = []
    /// Ticks arrive in registration order: the slot after the last one is checked first.
    @exclusivity(unchecked) private var hint = 0

    init(session: LineSession, state: WorkerState) {
        self.session = session
        self.state = state
    }

    /// Registers one link with `params` (a blocking call); ticks of the links already
    /// registered that arrive meanwhile are accounted for as usual.
    func register(params: JSONValue, deadline: Int64) throws {
        // The daemon may send this link's first tick before its response: not unexpected.
        let reply = try session.call(.register, params: params, deadline: deadline) { line in
            self.accept(line, receivedAt: System.monotonicNanoseconds(), registering: true)
        }
        switch reply.result {
        case .success(let value):
            guard let status = try? LinkStatusResult(json: value) else {
                state.note("unexpected Register result \(value.jsonString)")
                return
            }
            slots.append(Slot(link: status.link.rawValue))
            state.registeredLinks += 1
            state.callbackRateSum += status.callbackRate
        case .failure(let error):
            state.note("Register failed: \(error.message)")
        }
    }

    /// Drains a socket the (edge-triggered) epoll set reported ready: one `read`, the clock
    /// read once, every complete line accounted for; another `read` only when the first
    /// filled the buffer (a shorter one took everything queued).
    /// - Returns: whether the connection is still open.
    func receiveReady() -> Bool {
        while true {
            let outcome: ReadOutcome
            do {
                outcome = try session.receive()
            } catch {
                state.note("connection error: \(error)")
                return false
            }
            switch outcome {
            case .received:
                let now = System.monotonicNanoseconds()
                let more = session.buffer.isFull
                session.buffer.consumeLines { line in
                    self.accept(line, receivedAt: now)
                    return .next
                }
                if !more { return true }
            case .wouldBlock:
                return true
            case .endOfStream:
                return false
            }
        }
    }

    /// Accounts for one line: a Tick of one of this connection's links, else an unexpected
    /// line (except, while `registering`, a Tick of the link being registered).
    @inline(__always)
    private func accept(_ line: UnsafeRawBufferPointer, receivedAt now: Int64, registering: Bool = false) {
        guard let tick = TickLineScanner.scan(line) else {
            state.unexpectedLines += 1
            return
        }
        var index = hint < slots.count ? hint : 0
        if slots.isEmpty || slots[index].link != tick.link {
            guard let found = slots.firstIndex(where: { $0.link == tick.link }) else {
                if !registering { state.unexpectedLines += 1 }
                return
            }
            index = found
        }
        hint = index + 1
        let previous = slots[index].lastSequence
        if previous != 0 && tick.sequence != previous &+ tick.skipped &+ 1 { state.sequenceErrors += 1 }
        slots[index].lastSequence = tick.sequence
        guard tick.timestampNanoseconds >= state.windowStart, tick.timestampNanoseconds < state.windowEnd else { return }
        slots[index].received += 1
        state.received += 1
        state.skipped += tick.skipped
        _ = state.latency.record(UInt64(max(now - tick.timestampNanoseconds, 1_000)))
    }
}

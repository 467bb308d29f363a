#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import Histogram
import NIOCore

/// Everything one worker process measures, confined to its single event loop.
final class WorkerState {
    /// Ticks whose `timestamp` lies in `[windowStart, windowEnd)` (nanoseconds on
    /// `CLOCK_MONOTONIC`) are counted; the window is empty until the parent says go.
    var windowStart: Int64 = .max
    var windowEnd: Int64 = .min
    /// Receipt time minus `timestamp` of every counted tick, nanoseconds.
    var latency = nanosecondHistogram()
    /// Counted ticks.
    var received: UInt64 = 0
    /// Sum of `skipped` over counted ticks.
    var skipped: UInt64 = 0
    /// Ticks whose sequence broke `sequence == previous + skipped + 1`.
    var sequenceErrors: UInt64 = 0
    /// Lines that were neither a Tick nor a response we expected.
    var unexpectedLines: UInt64 = 0
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
    /// Register calls this worker makes in total.
    let expectedLinks: Int
    private var answered = 0

    init(expectedLinks: Int) {
        self.expectedLinks = expectedLinks
    }

    /// Whether every Register has been answered (with a link or an error).
    var allAnswered: Bool { answered >= expectedLinks }

    func note(_ error: String) {
        if errors.count < 5 { errors.append(error) }
    }

    /// One Register answered, with a link or an error.
    func registerAnswered() {
        answered += 1
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
            sequenceErrors: sequenceErrors, unexpectedLines: unexpectedLines, disconnects: disconnects,
            perLinkMinimum: registeredLinks == 0 ? 0 : perLinkMinimum, perLinkMaximum: perLinkMaximum,
            latencyBuckets: buckets, errors: errors
        )
    }
}

/// The raw NIO handler of one load connection: registers its links (requests encoded
/// with the protocol's own `RegisterRequest` and `JSONRPCOutboundMessage`), then scans
/// every Tick line in place with ``TickLineScanner``: no `JSONValue`, no allocation and
/// one clock read per socket read.
final class TickReceiver: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// One link of this connection.
    struct Slot {
        var link: UInt64
        var received: UInt64 = 0
        var lastSequence: UInt64 = 0
    }

    private let state: WorkerState
    private let linkCount: Int
    private let register: JSONValue
    private(set) var slots: [Slot] = []
    /// Ticks arrive in registration order: the slot after the last one is checked first.
    private var hint = 0
    /// The unfinished tail of the previous read (a line split across reads).
    private var carry = ByteBuffer()
    /// Register calls sent and not answered yet.
    private var pendingRegisters = 0

    /// - Parameters:
    ///   - linkCount: links to register on this connection.
    ///   - register: the Register params for each.
    init(state: WorkerState, linkCount: Int, register: JSONValue) {
        self.state = state
        self.linkCount = linkCount
        self.register = register
        slots.reserveCapacity(linkCount)
    }

    func channelActive(context: ChannelHandlerContext) {
        state.receivers.append(self)
        carry = context.channel.allocator.buffer(capacity: 4096)
        guard linkCount > 0 else { return }
        pendingRegisters = linkCount
        var buffer = context.channel.allocator.buffer(capacity: 160 * linkCount)
        for id in 1...linkCount {
            JSONRPCOutboundMessage.request(id: .number(JSONNumber(id)), method: V1Method.register.rawValue, params: register)
                .writeLine(into: &buffer)
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = System.monotonicNanoseconds()
        var buffer = unwrapInboundIn(data)
        if carry.readableBytes > 0 {
            carry.writeBuffer(&buffer)
            consumeLines(&carry, receivedAt: now)
            carry.discardReadBytes()
        } else {
            consumeLines(&buffer, receivedAt: now)
            if buffer.readableBytes > 0 {
                carry.clear()
                carry.writeBuffer(&buffer)
            }
        }
    }

    /// Handles every complete line in `buffer` and moves its reader index past them.
    private func consumeLines(_ buffer: inout ByteBuffer, receivedAt now: Int64) {
        let consumed = buffer.withUnsafeReadableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            var start = 0
            while start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
                let end = base.distance(to: UnsafeRawPointer(found))
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                if let tick = TickLineScanner.scan(line) {
                    account(tick, receivedAt: now)
                } else if !line.isEmpty {
                    control(line)
                }
                start = end + 1
            }
            return start
        }
        buffer.moveReaderIndex(forwardBy: consumed)
    }

    @inline(__always)
    private func account(_ tick: TickLineScanner.Fields, receivedAt now: Int64) {
        var index = hint < slots.count ? hint : 0
        if slots.isEmpty || slots[index].link != tick.link {
            guard let found = slots.firstIndex(where: { $0.link == tick.link }) else {
                state.unexpectedLines += 1
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

    /// A line that is not a Tick: a Register response (setup only) or something unexpected.
    private func control(_ line: UnsafeRawBufferPointer) {
        guard case .single(.response(_, let result))? = try? JSONRPCClientInbound.parse(line: line) else {
            state.unexpectedLines += 1
            return
        }
        switch result {
        case .success(let value):
            if let status = try? LinkStatusResult(json: value) {
                slots.append(Slot(link: status.link.rawValue))
                state.registeredLinks += 1
                state.callbackRateSum += status.callbackRate
            } else {
                state.note("unexpected Register result \(value.jsonString)")
            }
        case .failure(let error):
            state.note("Register failed: \(error.message)")
        }
        if pendingRegisters > 0 {
            pendingRegisters -= 1
            state.registerAnswered()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.disconnects += 1
        if pendingRegisters > 0 {
            state.note("connection closed by the daemon with \(pendingRegisters) Register calls unanswered")
            for _ in 0..<pendingRegisters { state.registerAnswered() }
            pendingRegisters = 0
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.note("connection error: \(error)")
        context.close(promise: nil)
    }
}

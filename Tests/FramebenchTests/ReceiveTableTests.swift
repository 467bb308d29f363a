#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import FrameRateTesting
import Histogram
import NIOCore
import Testing

@testable import framebench

/// The daemon's response to the session's `id`-th call: Register gave `link`.
private func registered(id: Int64, link: UInt64) -> String {
    let result = LinkStatusResult(
        link: LinkID(rawValue: link), display: DisplayID(rawValue: 0), refreshRate: 120, callbackRate: 120, decision: nil, limit: nil
    )
    return JSONRPCOutboundMessage.response(id: .number(JSONNumber(id)), result: .success(result.jsonValue)).jsonValue.jsonString + "\n"
}

/// The tests' ticks' time origin, nanoseconds on `CLOCK_MONOTONIC`: latencies stay in the histogram's range.
private let origin = MonotonicClock.nowNanoseconds

/// A Tick line as the daemon's encoder writes it; its timestamp is `sequence` ms after ``origin``.
private func tick(link: UInt64, sequence: UInt64, skipped: UInt64 = 0) -> String {
    TickLines.line(link: link, sequence: sequence, skipped: skipped, timestamp: origin + Int64(sequence) * 1_000_000)
}

/// A socket pair: the worker's end in a ``LineSession``, and the daemon's end.
private func connection() throws -> (session: LineSession, daemon: Int32) {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw ClientSocketError.system(call: "socketpair", errno: errno)
    }
    return (LineSession(socket: ClientSocket(adopting: fds[0]), buffer: LineBuffer(capacity: 4096)), fds[1])
}

/// Writes `text` whole on the daemon's end (small: one `send` takes it).
private func daemonSends(_ text: String, on fd: Int32) {
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
}

/// A table whose window counts every tick above.
private func countingTable() -> (ReceiveTable, WorkerState) {
    let state = WorkerState()
    state.windowStart = 0
    state.windowEnd = .max
    return (ReceiveTable(state: state), state)
}

/// Register's params: 120 Hz.
private func params() throws -> JSONValue {
    RegisterRequest(range: try FrameRateRange(minimum: 120, maximum: 120, preferred: 120), label: "test", highFrameRate: true).jsonValue
}

/// framebench's receive path (its worker's ``ReceiveTable``) over real socket pairs, the
/// daemon's side written by the protocol's own encoders.
@Suite("framebench's receive table")
struct ReceiveTableTests {
    @Test("registers through the session, then counts each link's ticks read into the shared buffer")
    func registersAndCounts() throws {
        let (table, state) = countingTable()
        let (session, daemon) = try connection()
        defer { close(daemon) }
        // The daemon's answers wait in the socket; link 7 ticks before link 8's answer.
        daemonSends(registered(id: 1, link: 7) + tick(link: 7, sequence: 1) + registered(id: 2, link: 8), on: daemon)
        try table.add(session, links: 2, params: try params(), deadline: TestDeadline.later())
        #expect(state.registeredLinks == 2 && state.callbackRateSum == 240)
        #expect(state.received == 1, "the tick read while registering counts")

        daemonSends(tick(link: 8, sequence: 1) + tick(link: 7, sequence: 2) + tick(link: 8, sequence: 2) + tick(link: 7, sequence: 3), on: daemon)
        #expect(table.receiveReady(session.socket.descriptor))
        #expect(table.slots.map(\.link) == [7, 8])
        #expect(table.slots.map(\.received) == [3, 2])
        #expect(state.received == 5 && state.sequenceErrors == 0 && state.unexpectedLines == 0 && state.skipped == 0)
        #expect(state.latency.totalCount == 5)
    }

    @Test("a line split across reads is kept for the connection and finished by its next read")
    func splitLine() throws {
        let (table, state) = countingTable()
        let (first, firstDaemon) = try connection()
        let (second, secondDaemon) = try connection()
        defer { close(firstDaemon); close(secondDaemon) }
        daemonSends(registered(id: 1, link: 1), on: firstDaemon)
        daemonSends(registered(id: 1, link: 2), on: secondDaemon)
        try table.add(first, links: 1, params: try params(), deadline: TestDeadline.later())
        try table.add(second, links: 1, params: try params(), deadline: TestDeadline.later())

        let line = tick(link: 1, sequence: 1)
        let cut = line.utf8.index(line.utf8.startIndex, offsetBy: 100)
        daemonSends(String(line[..<cut]), on: firstDaemon)
        #expect(table.receiveReady(first.socket.descriptor))
        #expect(state.received == 0 && state.unexpectedLines == 0)
        // Another connection's read in between must not see the first one's half line.
        daemonSends(tick(link: 2, sequence: 1), on: secondDaemon)
        #expect(table.receiveReady(second.socket.descriptor))
        #expect(state.received == 1 && state.unexpectedLines == 0)

        daemonSends(String(line[cut...]) + tick(link: 1, sequence: 2), on: firstDaemon)
        #expect(table.receiveReady(first.socket.descriptor))
        #expect(table.slots.map(\.received) == [2, 1])
        #expect(state.received == 3 && state.unexpectedLines == 0 && state.sequenceErrors == 0)
    }

    @Test("counts sequence breaks, other links' ticks and other lines; skips outside the window")
    func accounting() throws {
        let (table, state) = countingTable()
        let (session, daemon) = try connection()
        defer { close(daemon) }
        daemonSends(registered(id: 1, link: 7), on: daemon)
        try table.add(session, links: 1, params: try params(), deadline: TestDeadline.later())
        let closed = LinkClosedNotification(link: LinkID(rawValue: 7), status: .unavailable, message: "bye").jsonValue
        daemonSends(
            tick(link: 7, sequence: 1) + tick(link: 7, sequence: 4, skipped: 2) + tick(link: 7, sequence: 6) + tick(link: 99, sequence: 1)
                + JSONRPCOutboundMessage.notification(method: V1Method.closed.rawValue, params: closed).jsonValue.jsonString + "\n",
            on: daemon
        )
        #expect(table.receiveReady(session.socket.descriptor))
        #expect(state.received == 3 && state.skipped == 2)
        #expect(state.sequenceErrors == 1, "6 does not follow 4 without a skip")
        #expect(state.unexpectedLines == 2, "link 99's tick and the Closed notification")

        // Ticks before the window are followed for their sequence, not counted.
        state.windowStart = origin + 10_000_000
        daemonSends(tick(link: 7, sequence: 7) + tick(link: 7, sequence: 10, skipped: 2), on: daemon)
        #expect(table.receiveReady(session.socket.descriptor))
        #expect(state.received == 4 && state.sequenceErrors == 1 && table.slots[0].received == 4)
    }

    @Test("the end of a connection leaves nothing behind for the others")
    func endOfStream() throws {
        let (table, state) = countingTable()
        let (first, firstDaemon) = try connection()
        let (second, secondDaemon) = try connection()
        defer { close(secondDaemon) }
        daemonSends(registered(id: 1, link: 1), on: firstDaemon)
        daemonSends(registered(id: 1, link: 2), on: secondDaemon)
        try table.add(first, links: 1, params: try params(), deadline: TestDeadline.later())
        try table.add(second, links: 1, params: try params(), deadline: TestDeadline.later())

        let fd = first.socket.descriptor
        daemonSends(tick(link: 1, sequence: 1) + "{\"jsonrpc\":\"2.0\",\"meth", on: firstDaemon)
        #expect(table.receiveReady(fd))
        close(firstDaemon)
        #expect(!table.receiveReady(fd), "the daemon closed its end")
        table.close(fd)
        #expect(first.socket.descriptor == -1)
        #expect(table.receiveReady(fd), "a closed connection's descriptor is not read")

        daemonSends(tick(link: 2, sequence: 1), on: secondDaemon)
        #expect(table.receiveReady(second.socket.descriptor))
        #expect(state.received == 2 && state.unexpectedLines == 0)
        #expect(table.slots.map(\.received) == [1, 1])
    }
}

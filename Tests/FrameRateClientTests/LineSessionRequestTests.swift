#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import FrameRateTesting
import NIOCore
import Testing

@testable import FrameRateClient

/// The daemon's side of a session: the lines it received.
private func requests(on peer: ClientSocket) throws -> [JSONValue] {
    let session = LineSession(socket: peer)
    try peer.setNonBlocking(true)
    _ = try session.receive()
    var lines: [JSONValue] = []
    session.buffer.consumeLines { line in
        lines.append((try? JSONParser().parse(line)) ?? .null)
        return .next
    }
    return lines
}

@Suite("LineSession.call: the synchronous request helper, on a socketpair")
struct LineSessionRequestTests {
    @Test("writes one JSON-RPC request line with ids from 1 and returns the response with its id")
    func requestAndResponse() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine)
        // The daemon's answers are written before the calls: the socket holds them until read.
        try peer.send(Wire.registered(id: 1, link: 7) + "\n" + Wire.result(id: 2, #"{"status":"SERVING"}"#) + "\n")
        let params: JSONValue = ["range": ["minimum": 120, "maximum": 120, "preferred": 120]]

        let first = try session.call(.register, params: params, deadline: TestDeadline.later())
        #expect(first.result.map { $0["link"] } == .success(7))
        #expect(first.roundTripNanoseconds >= 0)
        let second = try session.call(.healthCheck, deadline: TestDeadline.later())
        #expect(second.result == .success(["status": "SERVING"]))

        let sent = try requests(on: peer)
        #expect(
            sent == [
                ["jsonrpc": "2.0", "id": 1, "method": .string(V1Method.register.rawValue), "params": params],
                ["jsonrpc": "2.0", "id": 2, "method": .string(V1Method.healthCheck.rawValue)],
            ]
        )
    }

    @Test("notifications before the response are handed over in order; lines after it stay buffered")
    func notificationsAreHandedOver() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine)
        let closed = Wire.closed(link: 3, status: .unavailable, message: "bye")
        try peer.send(
            TickLines.line(link: 3, sequence: 1) + closed + "\n" + TickLines.line(link: 3, sequence: 2)
                + Wire.result(id: 1, "{}") + "\n" + TickLines.line(link: 3, sequence: 3)
        )
        var handed: [String] = []
        let reply = try session.call(.healthCheck, deadline: TestDeadline.later()) { line in
            handed.append(String(decoding: line, as: UTF8.self))
        }
        #expect(reply.result == .success([:]))
        let tickOne = String(TickLines.line(link: 3, sequence: 1).dropLast())
        let tickTwo = String(TickLines.line(link: 3, sequence: 2).dropLast())
        #expect(handed == [tickOne, closed, tickTwo])
        var after: [TickLineScanner.Fields] = []
        session.buffer.consumeLines { line in
            if let tick = TickLineScanner.scan(line) { after.append(tick) }
            return .next
        }
        #expect(after.map(\.sequence) == [3])
    }

    @Test("an error response is the call's result; one with id null is taken as this call's")
    func errorResponses() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine)
        let notFound = RPCError.status(.notFound, "no link 9")
        let unreadable = RPCError.status(.invalidArgument, "request too large")
        try peer.send(Wire.error(id: 1, notFound) + "\n" + Wire.error(id: nil, unreadable) + "\n")
        #expect(try session.call(.invalidate, params: ["link": 9], deadline: TestDeadline.later()).result == .failure(notFound))
        #expect(try session.call(.healthCheck, deadline: TestDeadline.later()).result == .failure(unreadable))
    }

    @Test("a deadline already past times out at once; the late response is skipped by the next call")
    func staleResponseIsSkipped() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine)
        #expect(throws: ClientSocketError.timedOut) {
            try session.call(.healthCheck, deadline: MonotonicClock.nowNanoseconds)
        }
        try peer.send(Wire.result(id: 1, #""late""#) + "\n" + Wire.result(id: 2, #""fresh""#) + "\n")
        #expect(try session.call(.healthCheck, deadline: TestDeadline.later()).result == .success("fresh"))
    }

    @Test("a response to an id never sent, a batch, or a line that is not JSON-RPC is a protocol violation")
    func violations() throws {
        for line in [Wire.result(id: 5, "1"), "[\(Wire.result(id: 1, "1"))]", "not json", #"{"jsonrpc":"2.0"}"#] {
            let (mine, peer) = try socketPair()
            let session = LineSession(socket: mine)
            try peer.send(line + "\n")
            #expect(throws: ClientSocketError.self) {
                try session.call(.healthCheck, deadline: TestDeadline.later())
            }
            // The offending line was consumed: the next call finds nothing and times out.
            #expect(throws: ClientSocketError.timedOut, "\(line)") {
                try session.call(.healthCheck, deadline: MonotonicClock.nowNanoseconds)
            }
        }
    }

    @Test("the peer ending its stream before the response fails the call with closed")
    func closedBeforeResponse() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine)
        try peer.send(TickLines.line(link: 1, sequence: 1))
        // Half-closed: the request can still be sent, but no response will come.
        #expect(shutdown(peer.descriptor, Int32(SHUT_WR)) == 0)
        var ticks = 0
        #expect(throws: ClientSocketError.closed) {
            try session.call(.healthCheck, deadline: TestDeadline.later()) { _ in ticks += 1 }
        }
        #expect(ticks == 1)
    }

    @Test("sending to a closed peer fails with closed, without SIGPIPE")
    func sendToClosedPeer() throws {
        let (mine, peer) = try socketPair()
        peer.close()
        #expect(throws: ClientSocketError.closed) {
            try LineSession(socket: mine).call(.healthCheck, deadline: TestDeadline.later())
        }
    }

    @Test("readLine returns each line, then the unterminated rest, then nil")
    func readLines() throws {
        let (mine, peer) = try socketPair()
        let session = LineSession(socket: mine, buffer: LineBuffer(capacity: 4))
        try peer.send("ready\ngo 1 2\nrest")
        peer.close()
        #expect(try session.readLine(deadline: TestDeadline.later()) == "ready")
        #expect(try session.readLine(deadline: TestDeadline.later()) == "go 1 2")
        #expect(try session.readLine(deadline: TestDeadline.later()) == "rest")
        #expect(try session.readLine(deadline: TestDeadline.later()) == nil)
    }

    @Test("connecting to a path where nothing listens, or one too long, says so")
    func connectFailures() throws {
        let missing = "/tmp/framerated-test-nothing-\(MonotonicClock.nowNanoseconds).sock"
        #expect(throws: FrameRateClientError.daemonNotRunning(SocketPath.discover(explicit: missing))) {
            try LineSession.connect(toPath: missing)
        }
        let long = "/tmp/" + String(repeating: "x", count: UnixSocketAddress.maximumPathLength)
        let error = #expect(throws: FrameRateClientError.self) {
            try ClientSocket.connect(toPath: long)
        }
        guard case .connectionFailed(path: long, let reason)? = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("too long"))
    }
}

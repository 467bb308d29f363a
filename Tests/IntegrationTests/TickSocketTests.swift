import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// Tick sockets (`TickSocket/Open` and `Attach`) in a real daemon, over real sockets: the
/// ticks come on the tick socket and nothing else does, the daemon's end of it sits in no
/// epoll set, each socket's close ends the other, and every misuse gets a clear refusal.
@Suite("tick sockets in a real daemon")
struct TickSocketTests {
    static let range: JSONValue = ["minimum": 60.0, "maximum": 60.0, "preferred": 60.0]

    static func deadline(_ seconds: Int64 = 10) -> Int64 { MonotonicClock.nowNanoseconds + seconds * 1_000_000_000 }

    /// The link a `Register` reply names.
    static func register(on session: LineSession) throws -> UInt64 {
        let reply = try session.call(.register, params: ["range": range, "label": "tick-socket"], deadline: deadline())
        return UInt64(try unwrapped(try reply.result.get()["link"]?.int64Value, "Register answered without a link"))
    }

    /// A new connection to `daemon` and its tick socket.
    static func connectWithTickSocket(_ daemon: Daemon) throws -> (connection: LineSession, ticks: LineSession) {
        let connection = try LineSession.connect(toPath: daemon.socket)
        return (connection, try connection.openTickSocket(toPath: daemon.socket, deadline: deadline()))
    }

    /// The tick a line holds, or `nil` for any other line.
    static func tick(_ line: String) -> TickNotification? {
        guard let value = try? JSONParser().parse(line), value["method"]?.stringValue == V1Method.tick.rawValue else { return nil }
        return try? TickNotification(json: value["params"])
    }

    /// The gRPC status an error reply names.
    static func status(_ reply: RPCReply) -> GRPCStatusCode? {
        guard case .failure(let error) = reply.result else { return nil }
        return error.grpcStatus
    }

    /// The inodes of the daemon's open sockets (from `/proc/PID/fd`), and of every file
    /// any of its epoll sets watches (the `ino:` of each entry in the epoll descriptors'
    /// `fdinfo`, in hexadecimal: an entry left under a descriptor since closed still shows).
    static func sockets(of pid: pid_t) throws -> (open: Set<UInt64>, watched: Set<UInt64>) {
        var open = Set<UInt64>()
        var epolls: [Int] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") {
            guard let fd = Int(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)") else { continue }
            if target.hasPrefix("socket:["), let inode = UInt64(target.dropFirst(8).dropLast()) { open.insert(inode) }
            if target == "anon_inode:[eventpoll]" { epolls.append(fd) }
        }
        var watched = Set<UInt64>()
        for epoll in epolls {
            guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(epoll)", encoding: .utf8) else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
                for field in line.split(separator: " ", omittingEmptySubsequences: true) where field.hasPrefix("ino:") {
                    if let inode = UInt64(field.dropFirst(4), radix: 16) { watched.insert(inode) }
                }
            }
        }
        return (open, watched)
    }

    /// The inodes of the daemon's sockets that no epoll set of it watches.
    static func unwatchedSockets(of pid: pid_t) throws -> Set<UInt64> {
        let (open, watched) = try sockets(of: pid)
        return open.subtracting(watched)
    }

    /// Polls (every 5 ms, up to 10 s) until `condition` holds; whether it did.
    static func eventually(_ condition: () throws -> Bool) throws -> Bool {
        let end = deadline()
        while MonotonicClock.nowNanoseconds < end {
            if try condition() { return true }
            usleep(5_000)
        }
        return try condition()
    }

    @Test("ticks come on the tick socket and replies on the connection; the daemon reads nothing from the tick socket and watches it in no epoll set")
    func ticksComeOnTheTickSocket() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let main = try LineSession.connect(toPath: daemon.socket)
        let before = try Self.unwatchedSockets(of: daemon.process.pid)
        let ticks = try main.openTickSocket(toPath: daemon.socket, deadline: Self.deadline())
        // The attaching connection's reading side closes on a later turn: then the tick
        // socket is the one socket more that no epoll set watches.
        #expect(try Self.eventually { try Self.unwatchedSockets(of: daemon.process.pid).subtracting(before).count == 1 })
        let link = try Self.register(on: main)

        var sequences: [UInt64] = []
        while sequences.count < 3 {
            let line = try unwrapped(try ticks.readLine(deadline: Self.deadline()), "the tick socket closed")
            let tick = try unwrapped(Self.tick(line), "a line other than a tick on the tick socket: \(line)")
            #expect(tick.link.rawValue == link)
            sequences.append(tick.sequence)
        }
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 + 1 == $1 }, "\(sequences)")

        // Replies keep coming on the connection, with no tick among them.
        var notifications = 0
        let health = try main.call(.healthCheck, deadline: Self.deadline()) { _ in notifications += 1 }
        #expect(try health.result.get()["status"] == "SERVING")
        #expect(notifications == 0)

        // A request written to the tick socket is never read: only ticks follow.
        try Array("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"grpc.health.v1.Health/Check\"}\n".utf8).withUnsafeBytes {
            try ticks.socket.send($0, deadline: Self.deadline())
        }
        for _ in 0..<6 {
            let line = try unwrapped(try ticks.readLine(deadline: Self.deadline()), "the tick socket closed")
            #expect(Self.tick(line) != nil, "\(line)")
        }
        #expect(try Self.unwatchedSockets(of: daemon.process.pid).subtracting(before).count == 1)
    }

    /// The daemon writes a `Register` reply before the link's first tick, on a tick socket
    /// too: when a new link's first tick can be read, its reply is already on the
    /// connection. A batch of 64 Registers takes the control loop long enough (about a
    /// millisecond a dozen, debug build) that a 120 Hz vsync often falls inside it; ticks
    /// not held for the reply would then come first.
    @Test("a new link's first tick is written after its Register reply, batch by batch")
    func replyBeforeFirstTick() async throws {
        let daemon = try await Daemon.start(["--max-links-per-connection", "512"])
        defer { daemon.kill() }
        let (main, ticks) = try Self.connectWithTickSocket(daemon)
        let range: JSONValue = ["minimum": 120.0, "maximum": 120.0, "preferred": 120.0]
        var known: UInt64 = 0
        for batch in 0..<6 {
            let requests = (0..<64).map { index in
                JSONRPCOutboundMessage.request(
                    id: .number(JSONNumber(Int64(batch * 64 + index + 1))), method: V1Method.register.rawValue,
                    params: ["range": range, "highFrameRate": true]
                ).jsonValue
            }
            try Array((JSONValue.array(requests).jsonString + "\n").utf8).withUnsafeBytes { try main.socket.send($0, deadline: Self.deadline()) }
            // The first tick of a link of this batch: the reply must be readable by then.
            while true {
                let line = try unwrapped(try ticks.readLine(deadline: Self.deadline()), "the tick socket closed")
                guard let tick = Self.tick(line), tick.link.rawValue > known else { continue }
                let replyThere = try main.buffer.bufferedByteCount > 0 || main.socket.waitUntilReadable(deadline: MonotonicClock.nowNanoseconds)
                #expect(replyThere, "batch \(batch): link \(tick.link.rawValue)'s tick was readable before its Register reply")
                break
            }
            let reply = try JSONParser().parse(try unwrapped(try main.readLine(deadline: Self.deadline()), "no reply"))
            let links = try unwrapped(reply.arrayValue, "not a batch reply: \(reply.jsonString)").compactMap { $0["result"]?["link"]?.int64Value }
            #expect(links.count == 64, "\(reply.jsonString.prefix(300))")
            known = UInt64(links.max() ?? 0)
        }
    }

    /// A tick socket's queue filled (its client stopped reading) is watched for `EPOLLOUT`
    /// by the tick plane; once drained, the watch must go, or it would be a waiter on the
    /// socket again, which every read of a tick wakes.
    @Test("the tick plane stops watching a tick socket once its queue drains")
    func drainedTickSocketIsUnwatchedAgain() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let pid = daemon.process.pid
        let main = try LineSession.connect(toPath: daemon.socket)
        let before = try Self.unwatchedSockets(of: pid)
        let ticks = try main.openTickSocket(toPath: daemon.socket, deadline: Self.deadline())
        var tickInode: UInt64 = 0
        #expect(try Self.eventually {
            let new = try Self.unwatchedSockets(of: pid).subtracting(before)
            tickInode = new.first ?? 0
            return new.count == 1
        })
        // 64 links at 120 Hz, not read: the socket buffer fills, then the writer queues.
        let range: JSONValue = ["minimum": 120.0, "maximum": 120.0, "preferred": 120.0]
        for _ in 0..<64 {
            _ = try main.call(.register, params: ["range": range, "highFrameRate": true], deadline: Self.deadline()).result.get()
        }
        #expect(try Self.eventually { try Self.sockets(of: pid).watched.contains(tickInode) }, "no EPOLLOUT watch while the queue is full")
        // Read everything: the queue drains, and the watch goes.
        try ticks.socket.setNonBlocking(true)
        #expect(
            try Self.eventually {
                while case .received = try ticks.receive() { ticks.buffer.consumeLines { _ in .next } }
                return try !Self.sockets(of: pid).watched.contains(tickInode)
            }, "the tick socket is still in an epoll set after its queue drained"
        )
    }

    /// The `Presented` of a frame a newer `Present` replaced is written by the control loop,
    /// not the tick plane: it too goes to the tick socket, never to the connection.
    @Test("a replaced frame's Presented comes on the tick socket")
    func replacedFramePresentedComesOnTheTickSocket() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let (main, ticks) = try Self.connectWithTickSocket(daemon)
        let link = try Self.register(on: main)
        var tick: TickNotification?
        while tick == nil { tick = Self.tick(try unwrapped(try ticks.readLine(deadline: Self.deadline()), "the tick socket closed")) }
        let first = try unwrapped(tick, "no tick")
        // A frame held 5 s ahead, then replaced by one shown at once: the first is dropped.
        var onConnection: [String] = []
        let held = try main.call(
            .present, params: ["link": JSONValue(link), "sequence": JSONValue(first.sequence), "at": JSONValue(first.timestamp + 5)],
            deadline: Self.deadline()
        ) { onConnection.append(String(decoding: $0, as: UTF8.self)) }
        _ = try held.result.get()
        let replacing = try main.call(
            .present, params: ["link": JSONValue(link), "sequence": JSONValue(first.sequence)], deadline: Self.deadline()
        ) { onConnection.append(String(decoding: $0, as: UTF8.self)) }
        _ = try replacing.result.get()
        var dropped: JSONValue?
        while dropped == nil {
            let line = try unwrapped(try ticks.readLine(deadline: Self.deadline()), "the tick socket closed")
            let value = try JSONParser().parse(line)
            if value["method"]?.stringValue == V1Method.presented.rawValue, value["params"]?["dropped"] == true { dropped = value["params"] }
        }
        #expect(dropped?["sequence"] == JSONValue(first.sequence))
        #expect(onConnection.isEmpty, "notifications on the connection: \(onConnection)")
    }

    @Test("closing the tick socket ends its connection and links; closing the connection ends its tick socket")
    func eachCloseEndsTheOther() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        // The client closes its tick socket: the next tick's send fails, and the daemon
        // closes the connection (its links go).
        let (first, firstTicks) = try Self.connectWithTickSocket(daemon)
        _ = try Self.register(on: first)
        firstTicks.socket.close()
        var line: String? = ""
        while line != nil { line = try first.readLine(deadline: Self.deadline()) }

        // The client closes the connection: the tick socket reads end of stream.
        let (second, secondTicks) = try Self.connectWithTickSocket(daemon)
        _ = try Self.register(on: second)
        #expect(Self.tick(try unwrapped(try secondTicks.readLine(deadline: Self.deadline()), "no tick")) != nil)
        second.socket.close()
        line = ""
        while let read = line {
            line = try secondTicks.readLine(deadline: Self.deadline())
            if let line { #expect(Self.tick(line) != nil, "\(read) then \(line)") }
        }

        // Neither left a link behind.
        let observer = try LineSession.connect(toPath: daemon.socket)
        let state = try observer.call(.getState, deadline: Self.deadline()).result.get()
        #expect(try Self.eventually {
            let state = try observer.call(.getState, deadline: Self.deadline()).result.get()
            return state["displays"]?.arrayValue?.allSatisfy { ($0["links"]?.arrayValue ?? []).isEmpty } == true
        }, "\(state.jsonString)")
    }

    @Test("misuse is refused with a reason: an unknown token, Attach after other requests, Open or Attach after Register, requests after Attach")
    func refusals() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let stranger = try LineSession.connect(toPath: daemon.socket)
        let unknown = try stranger.call(
            .attachTickSocket, params: AttachTickSocketRequest(token: String(repeating: "0", count: 32)).jsonValue, deadline: Self.deadline()
        )
        #expect(Self.status(unknown) == .notFound)

        // A second Open replaces the first token; a closed connection's token goes with it.
        let twice = try LineSession.connect(toPath: daemon.socket)
        let replaced = try OpenTickSocketResult(result: try twice.call(.openTickSocket, deadline: Self.deadline()).result.get()).token
        _ = try twice.call(.openTickSocket, deadline: Self.deadline()).result.get()
        let gone = try LineSession.connect(toPath: daemon.socket)
        let closedToken = try OpenTickSocketResult(result: try gone.call(.openTickSocket, deadline: Self.deadline()).result.get()).token
        gone.socket.close()
        for token in [replaced, closedToken] {
            #expect(try Self.eventually {
                let attempt = try LineSession.connect(toPath: daemon.socket)
                defer { attempt.socket.close() }
                return Self.status(try attempt.call(.attachTickSocket, params: ["token": .string(token)], deadline: Self.deadline())) == .notFound
            })
        }

        // Open after Register.
        let registered = try LineSession.connect(toPath: daemon.socket)
        _ = try Self.register(on: registered)
        #expect(Self.status(try registered.call(.openTickSocket, deadline: Self.deadline())) == .failedPrecondition)

        // Register between Open and Attach: the token no longer attaches.
        let early = try LineSession.connect(toPath: daemon.socket)
        let token = try OpenTickSocketResult(result: try early.call(.openTickSocket, deadline: Self.deadline()).result.get()).token
        _ = try Self.register(on: early)
        let late = try LineSession.connect(toPath: daemon.socket)
        let refused = try late.call(.attachTickSocket, params: AttachTickSocketRequest(token: token).jsonValue, deadline: Self.deadline())
        #expect(Self.status(refused) == .failedPrecondition)

        // Attach as a second request; then, first on a new connection, it attaches; a second
        // Attach with the same token finds nothing.
        let owner = try LineSession.connect(toPath: daemon.socket)
        let fresh = try OpenTickSocketResult(result: try owner.call(.openTickSocket, deadline: Self.deadline()).result.get()).token
        let busy = try LineSession.connect(toPath: daemon.socket)
        _ = try busy.call(.healthCheck, deadline: Self.deadline())
        #expect(Self.status(try busy.call(.attachTickSocket, params: ["token": .string(fresh)], deadline: Self.deadline())) == .failedPrecondition)
        let batch = try LineSession.connect(toPath: daemon.socket)
        // A batch: Attach, then a request the daemon refuses (the connection is a tick socket now).
        let line = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"framerate.v1.TickSocket/Attach\",\"params\":{\"token\":\"\(fresh)\"}},"
            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"grpc.health.v1.Health/Check\"}]\n"
        try Array(line.utf8).withUnsafeBytes { try batch.socket.send($0, deadline: Self.deadline()) }
        let reply = try JSONParser().parse(try unwrapped(try batch.readLine(deadline: Self.deadline()), "no batch reply"))
        let replies = try unwrapped(reply.arrayValue, "not a batch reply: \(reply.jsonString)")
        #expect(replies.count == 2)
        #expect(replies.first?["result"]?["attached"] == true)
        #expect(replies.last?["error"]?["data"]?["status"] == "FAILED_PRECONDITION", "\(reply.jsonString)")
        let again = try LineSession.connect(toPath: daemon.socket)
        #expect(Self.status(try again.call(.attachTickSocket, params: ["token": .string(fresh)], deadline: Self.deadline())) == .notFound)
        // The owner's ticks now come on the batch's connection.
        _ = try Self.register(on: owner)
        #expect(Self.tick(try unwrapped(try batch.readLine(deadline: Self.deadline()), "no tick")) != nil)
    }
}

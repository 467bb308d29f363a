import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// The fan-out on several threads (`--fanout-threads`) in a real daemon. On this kind of
/// machine the default is one thread, so without this suite only the unit tests of
/// `FanOutHelper` and `make bench` would run the helpers. Each connection's ticks are
/// written by one thread (its shard); `Presented` goes with the shard's ticks, after
/// its vsync's tick.
@Suite("the fan-out on several threads in a real daemon")
struct FanOutThreadsTests {
    /// One connection with one 60 Hz link, read with the low-level client so that the
    /// order of lines on the wire is kept.
    private struct Subscriber {
        let session: LineSession
        let link: UInt64
        /// Every notification line received, in order.
        var lines: [String] = []
        /// Whether the link presents its frames (from the first 60 Hz tick on).
        var presenting = false

        init(socket: String, deadline: Int64) throws {
            session = try LineSession.connect(toPath: socket)
            let range: JSONValue = ["minimum": 60.0, "maximum": 60.0, "preferred": 60.0]
            let reply = try session.call(.register, params: ["range": range, "label": "fan-out"], deadline: deadline)
            let link = try unwrapped(try reply.result.get()["link"]?.int64Value, "Register answered without a link")
            self.link = UInt64(link)
        }

        /// Reads the next line; `nil` when none comes before `deadline`.
        mutating func readLine(deadline: Int64) throws -> String? {
            let line: String?
            do {
                line = try session.readLine(deadline: deadline)
            } catch .timedOut {
                return nil
            }
            let read = try unwrapped(line, "the daemon closed the connection")
            lines.append(read)
            return read
        }

        /// Waits for the next tick, takes every line already there (keeping the newest
        /// tick), and presents that tick's frame once the display runs at 60 Hz (before, a
        /// frame may show at a vsync the link does not tick at). Once a link presents, the
        /// daemon waits for each tick's frame before the next interval (docs/protocol.md,
        /// Present), so from then on every round presents. Returns the ticks read.
        mutating func round(deadline: Int64) throws -> Int {
            var newest: TickNotification?
            var ticks = 0
            while newest == nil {
                let line = try unwrapped(try readLine(deadline: deadline), "no tick before the deadline")
                if let tick = try Self.tick(line) { (newest, ticks) = (tick, ticks + 1) }
            }
            while let line = try readLine(deadline: MonotonicClock.nowNanoseconds) {
                if let tick = try Self.tick(line) { (newest, ticks) = (tick, ticks + 1) }
            }
            guard let tick = newest, presenting || (tick.refreshRate == 60 && tick.callbackRate == 60) else { return ticks }
            presenting = true
            let params: JSONValue = ["link": .number(JSONNumber(Int64(link))), "sequence": .number(JSONNumber(Int64(tick.sequence)))]
            let reply = try session.call(.present, params: params, deadline: deadline) { bytes in
                lines.append(String(decoding: bytes, as: UTF8.self))
            }
            _ = try reply.result.get()
            return ticks
        }

        static func notification(_ line: String, _ method: V1Method) throws -> JSONValue? {
            let message = try JSONValue(parsing: line)
            guard message["method"]?.stringValue == method.rawValue else { return nil }
            return message["params"]
        }

        static func tick(_ line: String) throws -> TickNotification? {
            try notification(line, .tick).map { try TickNotification(json: $0) }
        }

        static func presented(_ line: String) throws -> PresentedNotification? {
            try notification(line, .presented).map { try PresentedNotification(json: $0) }
        }
    }

    @Test("--fanout-threads 3: six connections tick in order, each Presented after its vsync's tick, closing three leaves the rest ticking")
    func threeThreads() async throws {
        let daemon = try await Daemon.start(["--fanout-threads", "3"])
        defer { daemon.kill() }
        // The helpers are started, and name themselves, once the leader runs: on a loaded
        // machine that may be after the daemon first answered.
        let wanted: Set = ["fanout-0", "fanout-1", "fanout-2"]
        var threads: Set<String> = []
        let namesDeadline = ContinuousClock.now + .seconds(10)
        while !threads.isSuperset(of: wanted) && ContinuousClock.now < namesDeadline {
            let task = "/proc/\(daemon.process.pid)/task"
            threads = Set(
                ((try? FileManager.default.contentsOfDirectory(atPath: task)) ?? []).compactMap {
                    try? String(contentsOfFile: "\(task)/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                })
            if !threads.isSuperset(of: wanted) { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(threads.isSuperset(of: wanted), "\(threads.sorted())")

        // The subscribers block on their sockets (up to the deadline): on a thread of their own.
        let socket = daemon.socket
        let received = try await onOwnThread(named: "fanout-subs") { try Self.subscribe(socket: socket) }

        var presentedChecked = 0
        for (link, lines) in received {
            var tickTimes: [Double] = []
            var lastSequence: UInt64?
            for line in lines {
                if let tick = try Subscriber.tick(line) {
                    #expect(tick.link.rawValue == link)
                    // A busy machine may skip vsyncs (counted in `skipped`), never reorder them.
                    if let lastSequence { #expect(tick.sequence > lastSequence, "\(tick.sequence) after \(lastSequence)") }
                    lastSequence = tick.sequence
                    tickTimes.append(tick.timestamp)
                } else if let presented = try Subscriber.presented(line), !presented.dropped {
                    // The vsync that showed the frame began an interval of this 60 Hz link (its
                    // frame was done), so it ticked the link too: that tick came first.
                    let shownAt = presented.presentedTime
                    #expect(tickTimes.contains { abs($0 - shownAt) < 2e-9 }, "Presented at \(shownAt) before its vsync's tick")
                    presentedChecked += 1
                }
            }
            #expect(lastSequence != nil)
        }
        // A frame per tick from the first 60 Hz tick: at least 30 rounds on each of the six
        // connections and 30 more on the last three, each round presenting one frame.
        #expect(presentedChecked >= 90, "\(presentedChecked) Presented checked")
        #expect(await daemon.stop() == 0)
    }

    /// Six subscribers read and present round-robin until each has 30 ticks, then the first
    /// three close and the other three go on for 30 more. Blocks for up to 30 s.
    /// - Returns: each subscriber's link and every line it received, in order.
    private static func subscribe(socket: String) throws -> [(link: UInt64, lines: [String])] {
        let deadline = MonotonicClock.nowNanoseconds + 30_000_000_000
        var subscribers = try (0..<6).map { _ in try Subscriber(socket: socket, deadline: deadline) }
        defer { for subscriber in subscribers { subscriber.session.socket.close() } }
        // Round-robin, so that every connection presents recent ticks.
        var counts = Array(repeating: 0, count: subscribers.count)
        while counts.contains(where: { $0 < 30 }) {
            for index in subscribers.indices { counts[index] += try subscribers[index].round(deadline: deadline) }
        }
        for subscriber in subscribers.prefix(3) { subscriber.session.socket.close() }
        counts = Array(repeating: 0, count: subscribers.count)
        while counts.dropFirst(3).contains(where: { $0 < 30 }) {
            for index in subscribers.indices.dropFirst(3) { counts[index] += try subscribers[index].round(deadline: deadline) }
        }
        return subscribers.map { ($0.link, $0.lines) }
    }
}

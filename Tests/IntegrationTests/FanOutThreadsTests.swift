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
        /// Ticks that came while a `Present` waited for its reply: the newest is the next
        /// round's to answer (once it presents, the link gets no tick until it does).
        var heardDuringPresent: (newest: TickNotification?, count: Int) = (nil, 0)

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

        /// Waits for the next tick (unless one came during the last round's `Present`: on a
        /// busy machine the next vsync's tick can come before the reply, and waiting for
        /// another would wait for ever), takes every line already there (keeping the newest
        /// tick), and presents that tick's frame once the display runs at 60 Hz (before, a
        /// frame may show at a vsync the link does not tick at). Once a link presents, the
        /// daemon waits for each tick's frame before the next interval (docs/protocol.md,
        /// Present), so from then on every round presents. Returns the ticks read.
        mutating func round(deadline: Int64) throws -> Int {
            var (newest, ticks) = heardDuringPresent
            heardDuringPresent = (nil, 0)
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
            var parseFailure: (any Error)?
            let reply = try session.call(.present, params: params, deadline: deadline) { bytes in
                let line = String(decoding: bytes, as: UTF8.self)
                lines.append(line)
                do {
                    if let tick = try Self.tick(line) { heardDuringPresent = (tick, heardDuringPresent.count + 1) }
                } catch {
                    parseFailure = error
                }
            }
            if let parseFailure { throw parseFailure }
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

        var presented = 0
        var orderChecked = 0
        for (link, lines) in received {
            var tickTimes: [Double] = []
            var sequences: Set<UInt64> = []
            var lastSequence: UInt64?
            // Every vsync at which the link ticked, whenever its tick came.
            let ticked = try lines.compactMap { try Subscriber.tick($0)?.timestamp }
            for (index, line) in lines.enumerated() {
                if let tick = try Subscriber.tick(line) {
                    #expect(tick.link.rawValue == link)
                    // A busy machine may skip vsyncs (counted in `skipped`), never reorder them.
                    if let lastSequence { #expect(tick.sequence > lastSequence, "\(tick.sequence) after \(lastSequence)") }
                    lastSequence = tick.sequence
                    sequences.insert(tick.sequence)
                    tickTimes.append(tick.timestamp)
                } else if let frame = try Subscriber.presented(line), !frame.dropped {
                    let before = lines[max(0, index - 4)...index]
                    // A frame's Presented comes after the tick it answers.
                    #expect(sequences.contains(frame.sequence), "Presented for tick \(frame.sequence) before that tick: \(before)")
                    presented += 1
                    // If the vsync that showed it ticked the link too (it does unless the link
                    // waits there for its newer tick's frame: a Present that came in the last
                    // moments before its target shows a vsync later, after the next tick went
                    // out), that tick came first: the shard sends its ticks, then Presented.
                    let shownAt = frame.presentedTime
                    guard ticked.contains(where: { abs($0 - shownAt) < 2e-9 }) else { continue }
                    #expect(
                        tickTimes.contains { abs($0 - shownAt) < 2e-9 },
                        "Presented at \(shownAt) before its vsync's tick; the lines before it: \(before)"
                    )
                    orderChecked += 1
                }
            }
            #expect(lastSequence != nil)
        }
        // A frame per round from the first 60 Hz tick, and 30 ticks on each of the six
        // connections and 30 more on the last three; on an idle machine nearly every frame
        // shows at a vsync that ticked its link (so its order was checked), on a busy one most.
        #expect(presented >= 90, "\(presented) Presented")
        #expect(orderChecked * 2 >= presented, "\(orderChecked) of \(presented) Presented shown at a vsync that ticked their link")
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

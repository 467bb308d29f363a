#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// What one worker measured, sent to the parent as one JSON line on its stdout.
struct WorkerSummary: Sendable {
    var links: Int
    /// Sum of the registered links' callback rates, Hz.
    var callbackRateSum: Double
    var received: UInt64
    var skipped: UInt64
    var sequenceErrors: UInt64
    var unexpectedLines: UInt64
    /// Waits in the window that returned at least one ready socket.
    var wakeups: UInt64
    var disconnects: Int
    /// Fewest and most ticks any one link received in the window.
    var perLinkMinimum: UInt64
    var perLinkMaximum: UInt64
    /// The latency histogram's non-empty buckets: (value in ns, count).
    var latencyBuckets: [(UInt64, UInt64)]
    var errors: [String]

    var jsonValue: JSONValue {
        [
            "type": "result", "links": JSONValue(UInt64(links)), "callback_rate_sum": JSONValue(callbackRateSum),
            "received": JSONValue(received), "skipped": JSONValue(skipped), "sequence_errors": JSONValue(sequenceErrors),
            "unexpected_lines": JSONValue(unexpectedLines), "wakeups": JSONValue(wakeups), "disconnects": JSONValue(UInt64(disconnects)),
            "per_link_min": JSONValue(perLinkMinimum), "per_link_max": JSONValue(perLinkMaximum),
            "latency_ns": .array(latencyBuckets.map { .array([JSONValue($0.0), JSONValue($0.1)]) }),
            "errors": .array(errors.map { .string($0) }),
        ]
    }

    init(
        links: Int, callbackRateSum: Double, received: UInt64, skipped: UInt64, sequenceErrors: UInt64, unexpectedLines: UInt64,
        wakeups: UInt64, disconnects: Int, perLinkMinimum: UInt64, perLinkMaximum: UInt64, latencyBuckets: [(UInt64, UInt64)], errors: [String]
    ) {
        self.links = links
        self.callbackRateSum = callbackRateSum
        self.received = received
        self.skipped = skipped
        self.sequenceErrors = sequenceErrors
        self.unexpectedLines = unexpectedLines
        self.wakeups = wakeups
        self.disconnects = disconnects
        self.perLinkMinimum = perLinkMinimum
        self.perLinkMaximum = perLinkMaximum
        self.latencyBuckets = latencyBuckets
        self.errors = errors
    }

    init(json: JSONValue) throws {
        func count(_ key: String) throws -> UInt64 {
            guard let value = json[key]?.int64Value, value >= 0 else { throw BenchError("worker result lacks \(key)") }
            return UInt64(value)
        }
        links = Int(try count("links"))
        callbackRateSum = json["callback_rate_sum"]?.doubleValue ?? 0
        received = try count("received")
        skipped = try count("skipped")
        sequenceErrors = try count("sequence_errors")
        unexpectedLines = try count("unexpected_lines")
        wakeups = try count("wakeups")
        disconnects = Int(try count("disconnects"))
        perLinkMinimum = try count("per_link_min")
        perLinkMaximum = try count("per_link_max")
        latencyBuckets = (json["latency_ns"]?.arrayValue ?? []).compactMap { pair in
            guard let value = pair[0]?.int64Value, let count = pair[1]?.int64Value else { return nil }
            return (UInt64(value), UInt64(count))
        }
        errors = (json["errors"]?.arrayValue ?? []).compactMap(\.stringValue)
    }
}

/// `framebench worker`: one load process, started by `framebench load` (hidden).
///
/// Protocol with the parent, one line each: the worker connects and registers, then
/// prints `{"type":"ready",...}`; the parent writes `go START END` (nanoseconds on
/// `CLOCK_MONOTONIC`); the worker counts ticks whose timestamp lies in the window,
/// waits `--grace` seconds after END for late ticks, prints its ``WorkerSummary`` and exits.
///
/// One thread does everything: its sockets (FrameRateClient's ``LineSession``s, read
/// through a ``ReceiveTable``) and its stdin sit in one epoll set (``ReadinessSet``), and
/// each readiness gets one `read`.
struct Worker: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "One load process (started by framebench itself).", shouldDisplay: false)

    @Option var socket: String
    @Option var connections: Int
    @Option var links: Int
    @Option var minimum: Double
    @Option var maximum: Double
    @Option var preferred: Double
    @Flag(inversion: .prefixedNo) var highFrameRate = true
    @Option(help: "Seconds to wait after the window for late ticks.") var grace: Double = 0.5
    @Flag(inversion: .prefixedNo, help: "Give each connection a tick socket before registering.") var tickSocket = true

    func validate() throws {
        // `grace` becomes nanoseconds (`Int64(grace * 1e9)`): out of range, that traps.
        guard grace >= 0, grace <= 60 else { throw ValidationError("--grace must be seconds with 0 <= seconds <= 60, got \(grace)") }
    }

    func run() throws {
        System.raiseOpenFileLimit()
        let range = try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
        let params = RegisterRequest(range: range, label: "framebench", highFrameRate: highFrameRate).jsonValue
        let state = WorkerState()
        let readiness = try ReadinessSet()
        let table = ReceiveTable(state: state)

        // Connect and register, one connection after the other: each Register is a blocking
        // call on the connection's own socket; ticks of links already registered wait in
        // their socket buffers meanwhile (they are outside the window anyway).
        let base = connections > 0 ? links / connections : 0
        let extra = connections > 0 ? links % connections : 0
        let deadline = System.monotonicNanoseconds() + 120_000_000_000
        for index in 0..<max(connections, 0) {
            let session = try Self.connect(socket, deadline: deadline)
            let reader: LineSession
            do {
                let ticks = tickSocket ? try session.openTickSocket(toPath: socket, buffer: LineBuffer(capacity: 4096), deadline: deadline) : nil
                reader = try table.add(session, tickSocket: ticks, links: base + (index < extra ? 1 : 0), params: params, deadline: deadline)
            } catch {
                state.note("connection \(index) during TickSocket/Attach or Register: \(error)")
                state.disconnects += 1
                continue
            }
            try readiness.watch(reader.socket.descriptor)
        }
        let ready: JSONValue = [
            "type": "ready", "links": JSONValue(UInt64(state.registeredLinks)), "callback_rate_sum": JSONValue(state.callbackRateSum),
            "errors": .array(state.errors.map { .string($0) }),
        ]
        try System.writeAll(1, ready.jsonString + "\n")

        // Receive until the window and the grace after it have passed; stdin brings the window.
        let input = LineSession(socket: ClientSocket(adopting: 0), buffer: LineBuffer(capacity: 4096))
        try readiness.watch(0, levelTriggered: true)
        let goDeadline = System.monotonicNanoseconds() + 600_000_000_000
        var stopAt: Int64?
        while true {
            let now = System.monotonicNanoseconds()
            let until = stopAt ?? goDeadline
            guard now < until else {
                if stopAt == nil { throw BenchError("worker: no 'go' from the parent within 600 s") }
                break
            }
            var inputReady = false
            var socketsReady = false
            try readiness.wait(timeoutMilliseconds: Int32(min((until - now + 999_999) / 1_000_000, 1000))) { fd in
                if fd == 0 {
                    inputReady = true
                    return
                }
                if !socketsReady {
                    socketsReady = true
                    let woke = System.monotonicNanoseconds()
                    if woke >= state.windowStart && woke < state.windowEnd { state.wakeups += 1 }
                }
                if !table.receiveReady(fd) {
                    readiness.unwatch(fd)
                    table.close(fd)
                    state.disconnects += 1
                }
            }
            guard inputReady else { continue }
            if try input.receive() == .endOfStream {
                readiness.unwatch(0)
                guard stopAt != nil else { return }  // the parent is gone before the window
                continue
            }
            var command: String?
            input.buffer.consumeLines { line in
                command = String(decoding: line, as: UTF8.self)
                return .stop
            }
            guard let command, stopAt == nil else { continue }
            let words = command.split(separator: " ")
            guard words.count == 3, words[0] == "go", let windowStart = Int64(words[1]), let windowEnd = Int64(words[2]) else {
                throw BenchError("worker: expected 'go START END', got '\(command)'")
            }
            state.windowStart = windowStart
            state.windowEnd = windowEnd
            stopAt = windowEnd + Int64(grace * 1e9)
        }
        try System.writeAll(1, state.summary(perLinkReceived: table.slots.lazy.map(\.received)).jsonValue.jsonString + "\n")
        // Exiting closes every connection at once; the daemon releases the links.
        Glibc.exit(0)
    }

    /// A connection to `path`; a transient failure (e.g. `EAGAIN`) is retried every 2 ms until `deadline`.
    private static func connect(_ path: String, deadline: Int64) throws -> LineSession {
        while true {
            let failure: FrameRateClientError
            do {
                // The session's own buffer only sees Register calls: reads after them go to the table's.
                return try LineSession.connect(toPath: path, buffer: LineBuffer(capacity: 4096))
            } catch {
                failure = error
            }
            guard case .connectionFailed = failure, System.monotonicNanoseconds() < deadline else { throw failure }
            System.sleep(seconds: 0.002)
        }
    }
}

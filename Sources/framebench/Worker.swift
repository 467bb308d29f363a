#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOPosix

/// What one worker measured, sent to the parent as one JSON line on its stdout.
struct WorkerSummary: Sendable {
    var links: Int
    /// Sum of the registered links' callback rates, Hz.
    var callbackRateSum: Double
    var received: UInt64
    var skipped: UInt64
    var sequenceErrors: UInt64
    var unexpectedLines: UInt64
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
            "unexpected_lines": JSONValue(unexpectedLines), "disconnects": JSONValue(UInt64(disconnects)),
            "per_link_min": JSONValue(perLinkMinimum), "per_link_max": JSONValue(perLinkMaximum),
            "latency_ns": .array(latencyBuckets.map { .array([JSONValue($0.0), JSONValue($0.1)]) }),
            "errors": .array(errors.map { .string($0) }),
        ]
    }

    init(
        links: Int, callbackRateSum: Double, received: UInt64, skipped: UInt64, sequenceErrors: UInt64, unexpectedLines: UInt64,
        disconnects: Int, perLinkMinimum: UInt64, perLinkMaximum: UInt64, latencyBuckets: [(UInt64, UInt64)], errors: [String]
    ) {
        self.links = links
        self.callbackRateSum = callbackRateSum
        self.received = received
        self.skipped = skipped
        self.sequenceErrors = sequenceErrors
        self.unexpectedLines = unexpectedLines
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

    func run() throws {
        System.raiseOpenFileLimit()
        let range = try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
        let params = RegisterRequest(range: range, label: "framebench", highFrameRate: highFrameRate).jsonValue
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let expected = links
        let state = try loop.submit { NIOLoopBound(WorkerState(expectedLinks: expected), eventLoop: loop) }.wait()

        // Connect, at most 64 attempts in flight; a full accept backlog (EAGAIN) is retried.
        let base = connections > 0 ? links / connections : 0
        let extra = connections > 0 ? links % connections : 0
        var inFlight: [(index: Int, future: EventLoopFuture<any Channel>)] = []
        let deadline = System.monotonicNanoseconds() + 120_000_000_000
        func start(_ index: Int) -> EventLoopFuture<any Channel> {
            let count = base + (index < extra ? 1 : 0)
            return ClientBootstrap(group: loop)
                // Ticks arrive a line or a few at a time: a fixed 2 KiB read buffer skips the
                // adaptive allocator's bookkeeping on every read.
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 2048))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(TickReceiver(state: state.value, linkCount: count, register: params))
                    }
                }
                .connect(unixDomainSocketPath: socket)
        }
        var next = 0
        while next < connections || !inFlight.isEmpty {
            while next < connections && inFlight.count < 64 {
                inFlight.append((next, start(next)))
                next += 1
            }
            let (index, future) = inFlight.removeFirst()
            do {
                _ = try future.wait()
            } catch {
                guard System.monotonicNanoseconds() < deadline else { throw BenchError("connection \(index) failed: \(error)") }
                System.sleep(seconds: 0.002)
                inFlight.append((index, start(index)))
            }
        }
        // Wait for every Register to be answered.
        while try !loop.submit({ state.value.allAnswered }).wait() {
            guard System.monotonicNanoseconds() < deadline else { throw BenchError("Register calls unanswered after 120 s") }
            System.sleep(seconds: 0.01)
        }
        let ready = try loop.submit { () -> JSONValue in
            let state = state.value
            return [
                "type": "ready", "links": JSONValue(UInt64(state.registeredLinks)), "callback_rate_sum": JSONValue(state.callbackRateSum),
                "errors": .array(state.errors.map { .string($0) }),
            ]
        }.wait()
        try System.writeAll(1, ready.jsonString + "\n")

        var input = LineReader(fd: 0)
        guard let go = try input.readLine(deadline: System.monotonicNanoseconds() + 600_000_000_000) else { return }
        let words = go.split(separator: " ")
        guard words.count == 3, words[0] == "go", let windowStart = Int64(words[1]), let windowEnd = Int64(words[2]) else {
            throw BenchError("worker: expected 'go START END', got '\(go)'")
        }
        try loop.submit {
            state.value.windowStart = windowStart
            state.value.windowEnd = windowEnd
        }.wait()
        System.sleep(untilNanoseconds: windowEnd + Int64(grace * 1e9))
        let summary = try loop.submit { state.value.summary() }.wait()
        try System.writeAll(1, summary.jsonValue.jsonString + "\n")
        // Exiting closes every connection at once; the daemon releases the links.
        Glibc.exit(0)
    }
}

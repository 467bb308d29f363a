import ArgumentParser
import FrameRatePosix
import FrameRateProtocol
import FrameRateServer
import FrameRateTesting

/// `framebench tick-cost`: the tick plane's own work per delivered tick, in process and
/// without a load generator beside it.
///
/// The daemon's real tick plane (``TickEngine`` with its control plane, the server harness
/// of the tests) sends to N real socket pairs, one link per connection, at 120 Hz, stepped
/// vsync by vsync on a stepped clock. Nothing else runs: between two steps this process
/// reads and discards what the sockets received, outside ``TickEngine/step(at:previousStepFinished:)``.
///
/// Timed natively it gives the step's wall time per delivered tick (user space and the
/// kernel's sends, with no reader to wake). Run under callgrind, collecting only inside the
/// step (`Tests/Benchmarks/run.sh` names `TickEngine.step`'s whole mangled symbol: a pattern
/// ending in `*` also matches the closure inside it, and toggles collection off there),
/// it gives the instructions the tick plane's user space executes per delivered tick: a
/// figure that does not move with the machine's load, unlike CPU shares on a shared VM, so
/// a change to the hot path can be judged by it. Callgrind collects in every step, the
/// warm-up's too: divide by `ticks + warmup_ticks`.
struct TickCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tick-cost",
        abstract: "Step the tick plane over N socket pairs in process; its wall time per delivered tick (run it under callgrind for instructions)."
    )

    @Option(help: "Links, one per connection, each at 120 Hz.") var links = 1_000
    @Option(help: "Measured vsyncs.") var vsyncs = 120
    @Option(help: "Vsyncs stepped before measuring (first touches, buffer growth).") var warmup = 12
    @Option(help: ArgumentHelp("How the tick plane sends: io_uring or send.", valueName: "path")) var tickSends = BatchSender.Path.ioUring.rawValue
    @Flag(help: "Print JSON instead of the summary.") var json = false

    func validate() throws {
        guard (1...20_000).contains(links) else { throw ValidationError("--links must be 1 to 20000") }
        guard (1...100_000).contains(vsyncs) else { throw ValidationError("--vsyncs must be 1 to 100000") }
        guard (0...10_000).contains(warmup) else { throw ValidationError("--warmup must be 0 to 10000") }
        guard BatchSender.Path(rawValue: tickSends) != nil else { throw ValidationError("--tick-sends must be io_uring or send") }
    }

    /// What one run measured.
    struct Measurement: Equatable {
        /// Ticks delivered in the measured steps, and how many were due.
        var ticks: Int
        var expected: Int
        /// Ticks delivered in the warm-up steps (callgrind counts those steps too).
        var warmupTicks: Int
        /// Wall time of the measured steps, nanoseconds on `CLOCK_MONOTONIC`.
        var stepNanoseconds: Int64
        var sendPath: BatchSender.Path
        var sendPathFallback: String?

        var nanosecondsPerTick: Double { ticks > 0 ? Double(stepNanoseconds) / Double(ticks) : 0 }
    }

    func run() throws {
        let measurement = try measure()
        if json {
            let value: JSONValue = [
                "links": JSONValue(UInt64(links)), "vsyncs": JSONValue(UInt64(vsyncs)), "ticks": JSONValue(UInt64(measurement.ticks)),
                "expected": JSONValue(UInt64(measurement.expected)), "warmup_ticks": JSONValue(UInt64(measurement.warmupTicks)),
                "send_path": .string(measurement.sendPath.rawValue),
                "send_path_fallback": measurement.sendPathFallback.map { .string($0) } ?? .null,
                "step_ns_per_tick": JSONValue(measurement.nanosecondsPerTick),
            ]
            print(value.jsonString)
        } else {
            print("tick-cost: \(links) links at 120 Hz, one per connection, \(vsyncs) vsyncs (after \(warmup) unmeasured)")
            print(
                "  delivered \(measurement.ticks) of \(measurement.expected) ticks through \(measurement.sendPath.rawValue)"
                    + (measurement.sendPathFallback.map { " (\($0))" } ?? "")
            )
            print("  TickEngine.step: \(Int(measurement.nanosecondsPerTick.rounded())) ns per delivered tick (wall, this process alone)")
        }
        guard measurement.ticks == measurement.expected else {
            throw BenchError("delivered \(measurement.ticks) ticks, expected \(measurement.expected)")
        }
    }

    /// Registers the links, steps the warm-up and the measured vsyncs, and counts what the sockets received.
    func measure() throws -> Measurement {
        let descriptors = System.raiseOpenFileLimit()
        guard descriptors >= 2 * links + 64 else {
            throw BenchError("\(links) socket pairs need \(2 * links + 64) descriptors; the limit is \(descriptors)")
        }
        let server = ServerHarness(
            limits: ServerConfiguration.Limits(linksPerConnection: 1, connections: links + 64),
            tickSendPath: BatchSender.Path(rawValue: tickSends) ?? .ioUring
        )
        var clients: [TestClient] = []
        clients.reserveCapacity(links)
        for _ in 0..<links {
            // A buffer that holds a few seconds of ticks: the reads between steps always keep up.
            let client = try server.connect(socketBuffer: 1 << 16)
            _ = try client.register(120, 120, 120, extra: #","highFrameRate":true"#)
            _ = try client.lines()
            clients.append(client)
        }
        let readers = clients.compactMap(\.peerDescriptor)
        guard readers.count == links else { throw BenchError("a connection has no socket") }
        var scratch = [UInt8](repeating: 0, count: 1 << 16)

        /// Reads what every socket holds; returns the lines (ticks) it held.
        func drain() -> Int {
            var lines = 0
            scratch.withUnsafeMutableBytes { buffer in
                for descriptor in readers {
                    while let count = SystemCall.read(descriptor, into: buffer), count > 0 {
                        for byte in buffer[..<count] where byte == UInt8(ascii: "\n") { lines += 1 }
                    }
                }
            }
            return lines
        }

        var warmupTicks = 0
        for _ in 0..<warmup {
            try server.runNextVsync()
            warmupTicks += drain()
        }
        var stepNanoseconds: Int64 = 0
        var ticks = 0
        for _ in 0..<vsyncs {
            let begin = System.monotonicNanoseconds()
            // The tick plane's step, then whatever it handed the control loop (nothing, unless the rate changes).
            try server.runNextVsync()
            stepNanoseconds += System.monotonicNanoseconds() - begin
            ticks += drain()
        }
        let sendPath = server.engine.sendPath
        return Measurement(
            ticks: ticks, expected: links * vsyncs, warmupTicks: warmupTicks, stepNanoseconds: stepNanoseconds,
            sendPath: sendPath.path, sendPathFallback: sendPath.fallbackReason
        )
    }
}

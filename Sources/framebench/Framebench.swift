#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FrameRateModel
import FrameRateProtocol
import FrameRateVersion

/// `framebench`: the load generator and the control-plane benchmarks of
/// `docs/performance.md`.
@main
struct Framebench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framebench",
        abstract: "Load generator and benchmarks for framerated.",
        discussion: """
            load (the default) streams ticks to N links over C connections in P processes and reports \
            latency, drops and the daemon's CPU and memory. startup, register, idle and arbitrate measure \
            the control plane; tick-cost steps the tick plane alone, in process. Every figure is from CLOCK_MONOTONIC and /proc of this machine.
            """,
        version: "framebench \(FrameRateVersion.description)",
        subcommands: [Load.self, Startup.self, RegisterLatency.self, Idle.self, Arbitrate.self, TickCost.self, Worker.self],
        defaultSubcommand: Load.self
    )
}

/// Which daemon to measure.
struct DaemonSelection: ParsableArguments {
    @Option(help: ArgumentHelp("Socket of a running framerated (default: the usual path rule).", valueName: "path"))
    var socket: String?

    @Flag(help: "Start framerated (the one beside framebench) on a temporary socket and stop it at the end.")
    var spawnDaemon = false

    @Option(help: ArgumentHelp("The daemon's pid for /proc (default: the socket's SO_PEERCRED).", valueName: "pid"))
    var daemonPid: Int32?

    @Option(help: ArgumentHelp("The framerated binary for --spawn-daemon.", valueName: "path"))
    var framerated: String?

    @Option(
        name: .customLong("daemon-arg"),
        parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An argument for the spawned framerated (repeat; e.g. --daemon-arg=--fanout-threads --daemon-arg=2).", valueName: "arg")
    )
    var daemonArguments: [String] = []

    func validate() throws {
        if spawnDaemon && socket != nil { throw ValidationError("--spawn-daemon and --socket exclude each other") }
    }

    /// The daemon to measure; a spawned one gets limits that fit the load.
    func open(connections: Int, linksPerConnection: Int) throws -> DaemonUnderTest {
        if spawnDaemon {
            return try DaemonUnderTest.spawn(
                binary: try DaemonUnderTest.binary(explicit: framerated),
                maxConnections: connections + 64, maxLinksPerConnection: max(64, linksPerConnection + 1),
                extraArguments: daemonArguments
            )
        }
        return try DaemonUnderTest.attach(socketPath: SocketPath.discover(explicit: socket).path, pid: daemonPid)
    }
}

/// `framebench load`: ticks to N links, measured at the receivers.
struct Load: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stream ticks to N links and measure latency, drops, CPU and memory.")

    @OptionGroup var daemon: DaemonSelection

    @Option(help: "Links in total.") var links = 100
    @Option(help: "Connections in total (default: one per link).") var connections: Int?
    @Option(help: "Client processes the connections are spread over.") var processes = 2
    @Option(help: ArgumentHelp("Measured window.", valueName: "seconds")) var duration = 10.0
    @Option(help: ArgumentHelp("Settling time after the last Register.", valueName: "seconds")) var warmup = 1.0
    @Option(name: .customLong("min"), help: ArgumentHelp("Range minimum.", valueName: "hz")) var minimum = 120.0
    @Option(name: .customLong("max"), help: ArgumentHelp("Range maximum.", valueName: "hz")) var maximum = 120.0
    @Option(help: ArgumentHelp("Preferred rate (0: none).", valueName: "hz")) var preferred = 120.0
    @Flag(inversion: .prefixedNo, help: "Declare the high-frame-rate entitlement (above 60 Hz on the phone profile).")
    var highFrameRate = true
    @Option(help: ArgumentHelp("Seconds between control probes (Health/Check, Register + Invalidate) in the window; 0: none.", valueName: "seconds"))
    var probeInterval = 0.1
    @Option(help: ArgumentHelp("Seconds to wait after the window for late ticks.", valueName: "seconds")) var grace = 0.5
    @Flag(inversion: .prefixedNo, help: "Receive each connection's ticks on a tick socket (TickSocket/Attach), which the daemon never reads.")
    var tickSocket = true
    @Flag(help: "Print JSON instead of the table.") var json = false

    func validate() throws {
        guard links >= 0, (connections ?? 1) >= 1, processes >= 1, duration > 0, duration <= 600, warmup >= 0, warmup <= 600 else {
            throw ValidationError("need links >= 0, connections >= 1, processes >= 1, 0 < duration <= 600, 0 <= warmup <= 600")
        }
        // Each becomes nanoseconds (`Int64(seconds * 1e9)`): out of range, that traps.
        guard probeInterval == 0 || (probeInterval >= 0.001 && probeInterval <= 60) else {
            throw ValidationError("--probe-interval must be 0 (no probes) or seconds with 0.001 <= seconds <= 60, got \(probeInterval)")
        }
        guard grace >= 0, grace <= 60 else {
            throw ValidationError("--grace must be seconds with 0 <= seconds <= 60, got \(grace)")
        }
        _ = try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
    }

    func run() throws {
        System.raiseOpenFileLimit()
        let connections = self.connections ?? max(links, 1)
        let plan = LoadPlan(
            links: links, connections: connections, processes: processes, duration: duration, warmup: warmup,
            range: try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred), highFrameRate: highFrameRate,
            probeInterval: probeInterval, grace: grace, tickSocket: tickSocket
        )
        let target = try daemon.open(connections: connections, linksPerConnection: (links + connections - 1) / connections)
        defer { target.stop() }
        let report = try LoadRun.run(plan, daemon: target)
        print(json ? report.jsonValue.jsonString : report.table)
    }
}

/// `framebench startup`: exec of framerated to its first answered request.
struct Startup: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Time from exec of framerated to its first answered Health/Check (target < 150 ms).")

    @Option(help: ArgumentHelp("The framerated binary (default: the one beside framebench).", valueName: "path")) var framerated: String?
    @Option(help: "Daemon starts to time.") var runs = 10
    @Flag(help: "Print JSON instead of the table.") var json = false

    func run() throws {
        let binary = try DaemonUnderTest.binary(explicit: framerated)
        var samples: [Double] = []
        for _ in 0..<max(1, runs) {
            let daemon = try DaemonUnderTest.spawn(binary: binary, maxConnections: 4096, maxLinksPerConnection: 64)
            samples.append(Double(daemon.startupNanoseconds ?? 0) / 1e6)
            daemon.stop()
        }
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        let worst = sorted.last!
        if json {
            let value: JSONValue = [
                "runs": JSONValue(UInt64(samples.count)), "startup_ms": ["p50": JSONValue(round3(median)), "max": JSONValue(round3(worst))],
                "samples_ms": .array(samples.map { JSONValue(round3($0)) }), "target_ms": 150, "met": .bool(worst < 150),
            ]
            print(value.jsonString)
        } else {
            print("startup: exec -> first answered Health/Check over \(samples.count) runs: p50 \(round3(median)) ms, max \(round3(worst)) ms (target < 150 ms: \(worst < 150 ? "met" : "MISSED"))")
        }
    }
}

/// `framebench register`: Register round trips while N links stream.
struct RegisterLatency: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register", abstract: "Register round-trip percentiles while N links tick at 120 Hz (target p99 < 1 ms at 1,000 links)."
    )

    @OptionGroup var daemon: DaemonSelection
    @Option(help: "Links streaming meanwhile (one per connection).") var links = 1000
    @Option(help: "Client processes for those links.") var processes = 1
    @Option(help: ArgumentHelp("Measured window.", valueName: "seconds")) var duration = 5.0
    @Option(help: ArgumentHelp("Seconds between probes (Health/Check, Register, Invalidate).", valueName: "seconds")) var interval = 0.005
    @Flag(help: "Print JSON instead of the table.") var json = false

    func run() throws {
        System.raiseOpenFileLimit()
        let plan = LoadPlan(
            links: links, connections: max(links, 1), processes: processes, duration: duration, warmup: 1,
            range: try FrameRateRange(minimum: 120, maximum: 120, preferred: 120), highFrameRate: true, probeInterval: interval, grace: 0.5,
            tickSocket: true
        )
        let target = try daemon.open(connections: plan.connections, linksPerConnection: 1)
        defer { target.stop() }
        let report = try LoadRun.run(plan, daemon: target)
        let met = report.register.p99 < 1000
        if json {
            let value: JSONValue = [
                "links": JSONValue(UInt64(report.links)), "register_us": report.register.jsonValue, "invalidate_us": report.invalidate.jsonValue,
                "health_us": report.health.jsonValue, "calls": JSONValue(report.register.count), "target_p99_us": 1000, "met": .bool(met),
                "load": report.jsonValue,
            ]
            print(value.jsonString)
        } else {
            print(report.table)
            print("register: p99 \(Int(report.register.p99)) us over \(report.register.count) calls with \(report.links) links streaming (target < 1000 us: \(met ? "met" : "MISSED"))")
        }
    }
}

/// `framebench idle`: the daemon's memory with C idle connections.
struct Idle: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The daemon's RSS with C idle connections (target < 64 MiB at 4,096).")

    @OptionGroup var daemon: DaemonSelection
    @Option(help: "Idle connections.") var connections = 4096
    @Option(help: "Client processes holding them.") var processes = 2
    @Flag(help: "Print JSON instead of the table.") var json = false

    func run() throws {
        System.raiseOpenFileLimit()
        let target = try daemon.open(connections: connections, linksPerConnection: 1)
        defer { target.stop() }
        System.sleep(seconds: 0.5)
        let before = ProcessSample.read(pid: target.pid)
        let plan = LoadPlan(
            links: 0, connections: connections, processes: processes, duration: 1, warmup: 1,
            range: try FrameRateRange(minimum: 120, maximum: 120, preferred: 120), highFrameRate: true, probeInterval: 0, grace: 0,
            tickSocket: false  // no links: what is measured is an idle connection
        )
        let report = try LoadRun.run(plan, daemon: target)
        let rss = report.daemonRSS
        let base = before?.rssKiB ?? 0
        let perConnection = connections > 0 ? Double(rss - base) * 1024 / Double(connections) : 0
        let met = rss < 64 * 1024
        if json {
            let value: JSONValue = [
                "connections": JSONValue(UInt64(connections)), "rss_kib": JSONValue(UInt64(rss)), "rss_before_kib": JSONValue(UInt64(base)),
                "bytes_per_connection": JSONValue(perConnection.rounded()), "daemon_cpu_pct": JSONValue((report.daemonCPU * 10).rounded() / 10),
                "target_kib": 65536, "met": .bool(met), "disconnects": JSONValue(UInt64(report.disconnects)),
            ]
            print(value.jsonString)
        } else {
            print("idle: \(connections) idle connections: daemon RSS \(rss) KiB (\(base) KiB before, \(Int(perConnection)) bytes per connection), CPU \(round3(report.daemonCPU)) % (target < 65536 KiB: \(met ? "met" : "MISSED"))")
            for error in report.errors { print("  error: \(error)") }
        }
    }
}

/// Rounds to three decimals for output.
func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Histogram

/// What to run: N links over C connections over P worker processes for D seconds.
struct LoadPlan: Sendable {
    var links: Int
    var connections: Int
    var processes: Int
    /// Measured window, seconds.
    var duration: Double
    /// Seconds between "every link registered" and the window (the display settles at its rate).
    var warmup: Double
    var range: FrameRateRange
    var highFrameRate: Bool
    /// Seconds between control probes during the window (Health/Check, Register + Invalidate); 0: none.
    var probeInterval: Double
    /// Seconds workers wait after the window for late ticks.
    var grace: Double
    /// Whether each connection receives its ticks on a tick socket (`TickSocket/Attach`),
    /// as a client that wants the cheapest receive path does.
    var tickSocket: Bool
}

/// Percentiles of a histogram of nanoseconds, in microseconds.
struct LatencySummary: Sendable {
    var count: UInt64
    var p50: Double
    var p99: Double
    var p999: Double
    var max: Double

    init(_ histogram: Histogram<UInt64>) {
        count = histogram.totalCount
        guard count > 0 else {
            p50 = 0; p99 = 0; p999 = 0; max = 0
            return
        }
        p50 = Double(histogram.valueAtPercentile(50)) / 1000
        p99 = Double(histogram.valueAtPercentile(99)) / 1000
        p999 = Double(histogram.valueAtPercentile(99.9)) / 1000
        max = Double(histogram.max) / 1000
    }

    var jsonValue: JSONValue {
        ["p50": JSONValue(p50.rounded()), "p99": JSONValue(p99.rounded()), "p999": JSONValue(p999.rounded()), "max": JSONValue(max.rounded())]
    }
}

/// A histogram of nanoseconds with the range every framebench figure needs (1 µs to 60 s, 3 digits).
func nanosecondHistogram() -> Histogram<UInt64> {
    Histogram<UInt64>(lowestDiscernibleValue: 1_000, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
}

/// Round trips of the control calls made during the window.
struct ControlProbes {
    var register = nanosecondHistogram()
    var invalidate = nanosecondHistogram()
    var health = nanosecondHistogram()
    var failures: [String] = []

    /// One Health/Check, then one Register + Invalidate of a 120 Hz link, each timed by
    /// FrameRateClient's synchronous request helper (5 s timeout each).
    mutating func probe(_ session: LineSession, range: FrameRateRange) {
        func call(_ method: V1Method, _ params: JSONValue? = nil) throws -> RPCReply {
            try session.call(method, params: params, deadline: System.monotonicNanoseconds() + 5_000_000_000)
        }
        do {
            let health = try call(.healthCheck)
            _ = self.health.record(UInt64(max(health.roundTripNanoseconds, 1_000)))
            let params = RegisterRequest(range: range, label: "framebench-probe", highFrameRate: true).jsonValue
            let registered = try call(.register, params)
            _ = register.record(UInt64(max(registered.roundTripNanoseconds, 1_000)))
            guard case .success(let value) = registered.result, let link = value["link"] else {
                note("Register probe failed: \(registered.result)")
                return
            }
            let invalidated = try call(.invalidate, ["link": link])
            _ = invalidate.record(UInt64(max(invalidated.roundTripNanoseconds, 1_000)))
        } catch {
            note("control probe: \(error)")
        }
    }

    private mutating func note(_ failure: String) {
        if failures.count < 3 { failures.append(failure) }
    }
}

/// Everything a load run measured.
struct LoadReport {
    var plan: LoadPlan
    var links: Int
    /// The measured window, seconds of wall time between the two `/proc` samples.
    var window: Double
    var latency: LatencySummary
    var expected: UInt64
    var received: UInt64
    var skipped: UInt64
    var sequenceErrors: UInt64
    var perLinkMinimum: UInt64
    var perLinkMaximum: UInt64
    var disconnects: Int
    var daemonPID: pid_t
    var daemonCPU: Double
    /// The daemon's tick plane (its `fanout-*` threads), % of one core: the part of
    /// ``daemonCPU`` that compares with the C floor's server, which does nothing but send.
    var tickPlaneCPU: Double
    var daemonRSS: Int
    var daemonPeakRSS: Int
    /// The worker processes' CPU (their receive path), % of one core.
    var generatorCPU: Double
    /// The parent's CPU (control probes, waiting), % of one core.
    var parentCPU: Double
    /// The workers' epoll waits in the window that found a socket ready.
    var wakeups: UInt64
    var register: LatencySummary
    var invalidate: LatencySummary
    var health: LatencySummary
    var errors: [String]

    var dropped: Int64 { Int64(expected) - Int64(received) }

    /// CPU time per received tick, microseconds, of a process set that used `percent` of
    /// one core over the window (`nil` without ticks). The ticks counted are those whose
    /// timestamp lies in the window, which lasts as long as the CPU sampling.
    func microsecondsPerTick(_ percent: Double) -> Double? {
        received > 0 ? percent / 100 * plan.duration / Double(received) * 1e6 : nil
    }

    var jsonValue: JSONValue {
        [
            "links": JSONValue(UInt64(links)), "connections": JSONValue(UInt64(plan.connections)),
            "processes": JSONValue(UInt64(plan.processes)), "duration": JSONValue(plan.duration),
            "tick_socket": .bool(plan.tickSocket), "latency_us": latency.jsonValue,
            "ticks": [
                "expected": JSONValue(expected), "received": JSONValue(received), "skipped": JSONValue(skipped),
                "dropped": .number(JSONNumber(dropped)), "sequence_errors": JSONValue(sequenceErrors),
                "per_link_min": JSONValue(perLinkMinimum), "per_link_max": JSONValue(perLinkMaximum),
            ],
            "daemon": [
                "pid": JSONValue(UInt64(daemonPID)), "cpu_pct": JSONValue((daemonCPU * 10).rounded() / 10),
                "rss_kib": JSONValue(UInt64(daemonRSS)), "peak_rss_kib": JSONValue(UInt64(daemonPeakRSS)),
                "us_per_tick": microsecondsPerTick(daemonCPU).map { JSONValue(($0 * 1000).rounded() / 1000) } ?? .null,
                "tick_plane_cpu_pct": JSONValue((tickPlaneCPU * 10).rounded() / 10),
            ],
            "generator": [
                "cpu_pct": JSONValue((generatorCPU * 10).rounded() / 10),
                "us_per_tick": microsecondsPerTick(generatorCPU).map { JSONValue(($0 * 1000).rounded() / 1000) } ?? .null,
                "parent_cpu_pct": JSONValue((parentCPU * 10).rounded() / 10),
                "wakeups": JSONValue(wakeups),
                "ticks_per_wakeup": wakeups > 0 ? JSONValue((Double(received) / Double(wakeups) * 10).rounded() / 10) : .null,
            ],
            "control_us": ["register": register.jsonValue, "invalidate": invalidate.jsonValue, "health": health.jsonValue],
            "window_s": JSONValue((window * 1000).rounded() / 1000),
            "disconnects": JSONValue(UInt64(disconnects)),
            "errors": .array(errors.map { .string($0) }),
        ]
    }

    /// The report for people.
    var table: String {
        func f(_ value: Double, _ decimals: Int = 0) -> String {
            decimals == 0 ? String(Int(value.rounded())) : String(Double(Int((value * 10).rounded())) / 10)
        }
        func perTick(_ percent: Double) -> String {
            microsecondsPerTick(percent).map { String(Double(Int(($0 * 100).rounded())) / 100) } ?? "–"
        }
        let r = plan.range
        var lines = [
            "framebench: \(links) links on \(plan.connections) connections in \(plan.processes) processes, "
                + "range \(FrameRateMath.format(r.minimum))/\(FrameRateMath.format(r.maximum))/\(FrameRateMath.format(r.preferred)) Hz"
                + (plan.highFrameRate ? " (entitled)" : "") + ", window \(f(window, 1)) s"
                + (plan.tickSocket ? ", ticks on tick sockets" : ""),
            "  latency us     p50 \(f(latency.p50))  p99 \(f(latency.p99))  p99.9 \(f(latency.p999))  max \(f(latency.max))",
            "  ticks          expected \(expected)  received \(received)  dropped \(dropped)  skipped \(skipped)"
                + (sequenceErrors > 0 ? "  sequence errors \(sequenceErrors)" : ""),
            "  per link       received min \(perLinkMinimum)  max \(perLinkMaximum)",
            "  daemon         pid \(daemonPID)  CPU \(f(daemonCPU, 1)) % (\(perTick(daemonCPU)) µs per tick; tick plane \(f(tickPlaneCPU, 1)) %)"
                + "  RSS \(daemonRSS) KiB (peak \(daemonPeakRSS))",
            "  generator      workers CPU \(f(generatorCPU, 1)) % (\(perTick(generatorCPU)) µs per tick, \(wakeups > 0 ? f(Double(received) / Double(wakeups), 1) : "–") ticks per wake-up)  parent CPU \(f(parentCPU, 1)) %",
        ]
        if register.count > 0 {
            lines.append(
                "  control us     Register p50 \(f(register.p50)) p99 \(f(register.p99)) max \(f(register.max)) (n=\(register.count));"
                    + "  Health p50 \(f(health.p50)) p99 \(f(health.p99)) max \(f(health.max))"
            )
        }
        if disconnects > 0 { lines.append("  disconnects    \(disconnects)") }
        for error in errors { lines.append("  error: \(error)") }
        return lines.joined(separator: "\n")
    }
}

/// Runs one load against `daemon`: spawns the workers, waits until every link is
/// registered and the warm-up has passed, measures the window, merges the results.
enum LoadRun {
    static func run(_ plan: LoadPlan, daemon: DaemonUnderTest) throws -> LoadReport {
        let executable = try System.executablePath()
        let processes = max(1, min(plan.processes, max(plan.connections, 1)))
        // Connection i holds links/connections links, the first links%connections one more;
        // worker p holds a contiguous block of connections.
        var workers: [ChildProcess] = []
        defer { for worker in workers { worker.stop(signal: SIGKILL, grace: 1) } }
        let base = plan.connections > 0 ? plan.links / plan.connections : 0
        let extra = plan.connections > 0 ? plan.links % plan.connections : 0
        var first = 0
        var links = 0
        var callbackRateSum = 0.0
        var errors: [String] = []
        let setupDeadline = System.monotonicNanoseconds() + 180_000_000_000
        for p in 0..<processes {
            let count = plan.connections / processes + (p < plan.connections % processes ? 1 : 0)
            let workerLinks = (first..<(first + count)).reduce(0) { $0 + base + ($1 < extra ? 1 : 0) }
            first += count
            let arguments = [
                "worker", "--socket", daemon.socketPath, "--connections", String(count), "--links", String(workerLinks),
                "--minimum", String(plan.range.minimum), "--maximum", String(plan.range.maximum),
                "--preferred", String(plan.range.preferred), plan.highFrameRate ? "--high-frame-rate" : "--no-high-frame-rate",
                "--grace", String(plan.grace), plan.tickSocket ? "--tick-socket" : "--no-tick-socket",
            ]
            let worker = try ChildProcess.spawn(executable, arguments, pipeStdin: true, pipeStdout: true)
            workers.append(worker)
            // One worker registers after the other, so each worker's connections are one
            // block in the daemon's order, as each of the C floor's readers holds one block
            // of its server's sockets: a vsync's sends reach the readers in turn, not
            // alternately.
            guard let line = try worker.output!.readLine(deadline: setupDeadline) else {
                throw BenchError("worker \(p) exited during setup\n\(daemon.logTail)")
            }
            let ready = try JSONParser().parse(line)
            links += Int(ready["links"]?.int64Value ?? 0)
            callbackRateSum += ready["callback_rate_sum"]?.doubleValue ?? 0
            errors += (ready["errors"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        System.sleep(seconds: plan.warmup)

        let probeClient = plan.probeInterval > 0 ? try LineSession.connect(toPath: daemon.socketPath) : nil
        // This process only sleeps and probes: at nice -10 (when allowed) its own wake-up on a
        // machine the workers saturate does not count against the daemon's answer time.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -10)
        let windowStart = System.monotonicNanoseconds() + 100_000_000
        let windowEnd = windowStart + Int64(plan.duration * 1e9)
        for worker in workers { try System.writeAll(worker.stdin!, "go \(windowStart) \(windowEnd)\n") }
        System.sleep(untilNanoseconds: windowStart)
        let sampledAt = System.monotonicNanoseconds()
        let daemonBefore = ProcessSample.read(pid: daemon.pid)
        let parentBefore = ProcessSample.read(pid: getpid())
        let workersBefore = workers.map { ProcessSample.read(pid: $0.pid) }

        var probes = ControlProbes()
        if let probeClient {
            var next = windowStart
            while true {
                next += Int64(plan.probeInterval * 1e9)
                guard next < windowEnd else { break }
                System.sleep(untilNanoseconds: next)
                probes.probe(probeClient, range: plan.range)
            }
        }
        System.sleep(untilNanoseconds: windowEnd)
        let sampledEnd = System.monotonicNanoseconds()
        let daemonAfter = ProcessSample.read(pid: daemon.pid)
        let parentAfter = ProcessSample.read(pid: getpid())
        let workersAfter = workers.map { ProcessSample.read(pid: $0.pid) }
        let window = Double(sampledEnd - sampledAt) / 1e9

        var latency = nanosecondHistogram()
        var received: UInt64 = 0
        var skipped: UInt64 = 0
        var sequenceErrors: UInt64 = 0
        var perLinkMinimum = UInt64.max
        var perLinkMaximum: UInt64 = 0
        var disconnects = 0
        var wakeups: UInt64 = 0
        let resultDeadline = windowEnd + Int64((plan.grace + 60) * 1e9)
        for (index, worker) in workers.enumerated() {
            guard let line = try worker.output!.readLine(deadline: resultDeadline) else { throw BenchError("worker \(index) exited without a result") }
            let summary = try WorkerSummary(json: try JSONParser().parse(line))
            received += summary.received
            skipped += summary.skipped
            sequenceErrors += summary.sequenceErrors
            disconnects += summary.disconnects
            wakeups += summary.wakeups
            if summary.links > 0 {
                perLinkMinimum = min(perLinkMinimum, summary.perLinkMinimum)
                perLinkMaximum = max(perLinkMaximum, summary.perLinkMaximum)
            }
            for (value, count) in summary.latencyBuckets { _ = latency.record(value, count: count) }
            errors += summary.errors
            if summary.unexpectedLines > 0 { errors.append("worker \(index): \(summary.unexpectedLines) unexpected lines") }
        }
        for worker in workers { worker.reap(timeout: 5) }
        workers = []
        errors += probes.failures
        var generatorCPU = 0.0
        for (before, after) in zip(workersBefore, workersAfter) {
            generatorCPU += ProcessSample.cpuPercent(from: before, to: after, over: window)
        }
        return LoadReport(
            plan: LoadPlan(
                links: plan.links, connections: plan.connections, processes: processes, duration: plan.duration, warmup: plan.warmup,
                range: plan.range, highFrameRate: plan.highFrameRate, probeInterval: plan.probeInterval, grace: plan.grace,
                tickSocket: plan.tickSocket
            ),
            links: links, window: window, latency: LatencySummary(latency),
            expected: UInt64((callbackRateSum * plan.duration).rounded()), received: received, skipped: skipped,
            sequenceErrors: sequenceErrors, perLinkMinimum: links == 0 ? 0 : perLinkMinimum, perLinkMaximum: perLinkMaximum,
            disconnects: disconnects, daemonPID: daemon.pid,
            daemonCPU: ProcessSample.cpuPercent(from: daemonBefore, to: daemonAfter, over: window),
            tickPlaneCPU: ProcessSample.tickPlaneCPUPercent(from: daemonBefore, to: daemonAfter, over: window),
            daemonRSS: daemonAfter?.rssKiB ?? 0, daemonPeakRSS: daemonAfter?.peakRSSKiB ?? 0, generatorCPU: generatorCPU,
            parentCPU: ProcessSample.cpuPercent(from: parentBefore, to: parentAfter, over: window), wakeups: wakeups,
            register: LatencySummary(probes.register), invalidate: LatencySummary(probes.invalidate), health: LatencySummary(probes.health),
            errors: errors
        )
    }
}

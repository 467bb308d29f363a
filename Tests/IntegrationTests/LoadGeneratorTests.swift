import FrameRateProtocol
import Foundation
import Testing

/// `framebench load`, the instrument `make bench` measures the daemon with, run for real: it
/// spawns this build's daemon, its worker processes register links on several connections
/// and count every tick. The figures are the benchmark's business; this checks that the
/// instrument counts right: every link registered and heard from, no sequence break, no
/// line it could not place, no connection lost.
@Suite("framebench load against a real daemon")
struct LoadGeneratorTests {
    @Test("40 links on 8 connections in 2 worker processes: every link ticks, every tick is accounted for")
    func countsEveryTick() async throws {
        let directory = try Paths.temporaryDirectory()
        let run = try TestProcess(
            executable: Paths.binaries.appendingPathComponent("framebench").path,
            arguments: [
                "load", "--spawn-daemon", "--framerated", Paths.framerated, "--links", "40", "--connections", "8",
                "--processes", "2", "--duration", "1", "--warmup", "0.5", "--probe-interval", "0.2", "--json",
            ],
            stderrURL: directory.appendingPathComponent("framebench.log")
        )
        #expect(await run.waitForExit(timeout: .seconds(120)) == 0, "\(run.stderr)")
        let report = try JSONValue(parsing: try #require(run.output.last, "\(run.stderr)"))
        #expect(report["links"] == 40 && report["connections"] == 8 && report["processes"] == 2, "\(report.jsonString)")
        #expect(report["errors"] == .array([]), "\(report.jsonString)")
        #expect(report["disconnects"] == 0)
        let ticks = try #require(report["ticks"])
        #expect(ticks["sequence_errors"] == 0, "\(ticks.jsonString)")
        let expected = try #require(ticks["expected"]?.int64Value)
        let received = try #require(ticks["received"]?.int64Value)
        // 40 links × 120 Hz × the window; a debug daemon on a busy machine may miss some.
        #expect(expected >= 40 * 100, "\(ticks.jsonString)")
        #expect(received * 2 >= expected && received <= expected, "\(ticks.jsonString)")
        #expect((ticks["per_link_min"]?.int64Value ?? 0) > 0, "every link received ticks: \(ticks.jsonString)")
        #expect(report["generator"]?["us_per_tick"]?.doubleValue != nil, "the generator reports its own cost")
        // The tick plane's threads are part of the daemon: their CPU is at most the whole's,
        // give or take the rounding: each thread's time and the process's are read a moment
        // apart, in clock ticks of 10 ms, which are 1 % of the 1 s window. The daemon runs
        // half the CPUs' threads, 1 to 8 (ServerConfiguration.defaultFanOutThreads).
        let daemonCPU = try #require(report["daemon"]?["cpu_pct"]?.doubleValue)
        let tickPlaneCPU = try #require(report["daemon"]?["tick_plane_cpu_pct"]?.doubleValue, "\(report.jsonString)")
        let fanOutThreads = Double(min(8, max(1, ProcessInfo.processInfo.activeProcessorCount / 2)))
        #expect(tickPlaneCPU >= 0 && tickPlaneCPU <= daemonCPU + fanOutThreads + 2, "\(report.jsonString)")
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

extension Daemon {
    /// Starts a long-running `framectl` against this daemon with its standard error merged
    /// into standard output, so a test can wait for a stderr line as it is printed.
    func framectlMerged(_ arguments: [String]) throws -> TestProcess {
        try TestProcess(
            executable: "/bin/sh", arguments: ["-c", #"exec "$0" "$@" 2>&1"#, Paths.framectl] + arguments + ["--socket", socket],
            stderrURL: directory.appendingPathComponent("framectl-\(UUID().uuidString.prefix(6)).log")
        )
    }
}

/// Issue 11 where the user looks: framectl register's limit line, status's decision.
@Suite("framectl shows the decision (separate processes)", .serialized)
struct DecisionCommandTests {
    @Test("register --no-high-frame-rate: one stderr line names the entitlement; status lists the link as limited")
    func entitlementGate() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let register = try daemon.framectlMerged(["register", "--min", "80", "--max", "120", "--no-high-frame-rate", "--label", "gated"])
        defer { register.signal(SIGKILL) }
        let line = await register.firstLine { $0.hasPrefix("limited") }
        #expect(line == "limited to 60 Hz: this link lacks the high-frame-rate entitlement (add --high-frame-rate)")
        // The line comes before the ticks: the first tick means the watch is up.
        #expect(await register.firstLine { $0.hasPrefix("tick ") } != nil)
        #expect(register.output.first?.hasSuffix("refresh 60 Hz, callback 60 Hz") == true, "\(register.output)")

        let status = try await daemon.framectl(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.first == "display 0: 60 Hz")
        #expect(status.stdout.contains("  rule:    exact (step 2: the lowest rate that serves every link exactly)"), "\(status.stdout)")
        #expect(status.stdout.contains("  limited: link 1 wants 120 Hz, gets 60 Hz (no high-frame-rate entitlement)"), "\(status.stdout)")
        #expect(status.stdout.contains("  cap:     none"))
        #expect(status.stdout.allSatisfy { $0.count <= 80 }, "80 columns: \(status.stdout)")
    }

    @Test("register --min 80 --max 120 ticks at 120 Hz by default, says nothing, then names Low Power Mode when it comes and goes")
    func capFollowed() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let register = try daemon.framectlMerged(["register", "--min", "80", "--max", "120", "--preferred", "120"])
        defer { register.signal(SIGKILL) }
        #expect(await register.firstLine { $0.hasPrefix("tick ") } != nil)
        let registration = try #require(register.output.first)
        #expect(registration.wholeMatch(of: /link 1 on display 0: refresh 120 Hz, callback 120 Hz/) != nil, "\(registration)")
        #expect(!register.output.contains { $0.hasPrefix("limited") }, "entitled by default: \(register.output)")

        let caps = try await daemon.framectl(["caps", "--low-power", "on"])
        #expect(caps.status == 0, "\(caps.stderr)")
        let limited = await register.firstLine { $0.hasPrefix("limited") }
        #expect(limited == "limited to 60 Hz by Low Power Mode")

        let observer = try await daemon.connect()
        _ = try await observer.waitForState { $0.displays[0].refreshRate == 60 }
        await observer.close()
        let status = try await daemon.framectl(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("  rule:    cap (step 1: a cap holds the display)"), "\(status.stdout)")
        #expect(status.stdout.contains("  held by: no link"))
        #expect(status.stdout.contains("  cap:     Low Power Mode, 60 Hz"))
        #expect(status.stdout.contains("  limited: link 1 wants 120 Hz, gets 60 Hz (capped by Low Power Mode)"), "\(status.stdout)")
        #expect(status.stdout.contains("  pending: none"))

        let off = try await daemon.framectl(["caps", "--low-power", "off"])
        #expect(off.status == 0, "\(off.stderr)")
        #expect(await register.firstLine { $0.hasPrefix("no longer limited") } == "no longer limited: the link may have the rates it asked for")
        // stdout stays the tick stream: every line is the registration, a tick, or one of the two limit lines.
        #expect(register.output.filter { !$0.hasPrefix("tick ") }.count == 3, "\(register.output.filter { !$0.hasPrefix("tick ") })")
    }

    @Test("watch: each rate change with its time and decision, in text and as JSON")
    func watchShowsDecisions() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let text = try daemon.framectlMerged(["watch"])
        defer { text.signal(SIGKILL) }
        let json = try daemon.framectlMerged(["watch", "--json"])
        defer { json.signal(SIGKILL) }
        #expect(await text.firstLine { $0.hasPrefix("watch ") } != nil)
        #expect(await json.firstLine { $0.hasPrefix("{\"watch\"") } != nil)
        let register = try await daemon.framectl(["register", "--min", "80", "--max", "120", "--preferred", "120", "--count", "3"])
        #expect(register.status == 0, "\(register.stderr)")
        let change = try #require(await text.firstLine { $0.contains("refresh 60 Hz -> 120 Hz") })
        #expect(
            change.wholeMatch(of: /\d+\.\d{6} display 0: refresh 60 Hz -> 120 Hz; rule exact; held by link 1; cap none \(.+\)/) != nil,
            "\(change)"
        )
        let event = try JSONValue(parsing: try #require(await json.firstLine { $0.contains("\"refreshRateChanged\"") }))
        let decision = try DecisionState(json: try #require(event["decision"]))
        #expect(decision.rule == .exact && decision.rate == 120 && decision.deciders == [LinkID(rawValue: 1)] && decision.pending == nil)
        #expect(event["at"]?.doubleValue.map { $0 > 0 } == true)
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// `framerated --clock virtual` as a real process with real clients (issue 14 §3): the
/// Swift client in this process, the Python script in others.
@Suite(.serialized) struct VirtualClockTests {
    static let epoch = 1000.0
    static var script: String { Paths.packageRoot.appendingPathComponent("Tests/IntegrationTests/Scripts/virtual_clock_script.py").path }

    /// Runs the causally ordered script against a fresh virtual-clock daemon; returns
    /// every line its connections received and its summary.
    static func runScript(seconds: Double, pipelined: Bool = false) async throws -> (bytes: Data, summary: [String: Any]) {
        let daemon = try await Daemon.start(["--clock", "virtual"])
        defer { daemon.kill() }
        let out = daemon.directory.appendingPathComponent("received.txt")
        let client = try TestProcess(
            executable: "/usr/bin/env", arguments: ["python3", script, "--socket", daemon.socket, "--out", out.path, "--seconds", "\(seconds)"] + (pipelined ? ["--pipelined"] : []),
            stderrURL: daemon.directory.appendingPathComponent("script.log")
        )
        let status = await client.waitForExit(timeout: .seconds(120))
        #expect(status == 0, "script failed: \(client.stderr)")
        let summary = try #require(client.output.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        return (try Data(contentsOf: out), summary)
    }

    /// The holder identities in events and states name the client's pid, which differs
    /// between two runs of any script; everything else must be byte-identical.
    static func withoutPeerPIDs(_ bytes: Data) -> String {
        String(decoding: bytes, as: UTF8.self).replacing(/"pid":[0-9]+/, with: "\"pid\":0")
    }

    @Test func theSameScriptGivesByteIdenticalTickAndEventStreams() async throws {
        let first = try await Self.runScript(seconds: 10)
        let second = try await Self.runScript(seconds: 10)
        #expect(first.bytes.count > 100_000)
        #expect(Self.withoutPeerPIDs(first.bytes) == Self.withoutPeerPIDs(second.bytes))
        // The race a second thread would open: the two registrations in one write land
        // exactly where they land when the second waits for the first one's reply (the
        // first link's first tick between them).
        let pipelined = try await Self.runScript(seconds: 10, pipelined: true)
        #expect(Self.withoutPeerPIDs(first.bytes) == Self.withoutPeerPIDs(pipelined.bytes))
        // The exact outcome of 10 virtual seconds: link 1 ticks at 120 Hz from the first
        // vsync after its registration, link 2 at 30 Hz for 2 s then at 60 Hz; nothing skipped.
        for run in [first.summary, second.summary, pipelined.summary] {
            #expect(run["fastTicks"] as? Int == 1199)
            #expect(run["slowTicks"] as? Int == 538)
            #expect(run["fastSkipped"] as? Int == 0 && run["slowSkipped"] as? Int == 0)
            #expect(run["presented"] as? Int == 538)
            #expect(run["hitch"] as? Double == 0)
            #expect(run["clock"] as? String == "virtual")
            #expect(run["refreshRate"] as? Double == 10)
            #expect(run["now"] as? Double == run["advancedTo"] as? Double)
        }
    }

    @Test func ticksFollowVirtualTimeFromTheEpochAndAdvanceMovesItOnlyWithoutTickingLinks() async throws {
        let daemon = try await Daemon.start(["--clock", "virtual", "--display", "fixed-60"])
        defer { daemon.kill() }
        let connection = try await daemon.connect()
        let initial = try await connection.state()
        #expect(initial.clock == "virtual")
        #expect(initial.now == Self.epoch)
        #expect(try await connection.advance(seconds: 0.5) == Self.epoch + 0.5)
        #expect(try await connection.state().now == Self.epoch + 0.5)

        let link = try await connection.register(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60))
        var ticks: [TickNotification] = []
        for await tick in link.ticks {
            ticks.append(tick)
            if ticks.count == 120 { break }
            try await link.frameDone(sequence: tick.sequence)
        }
        // 120 consecutive vsyncs of the 60 Hz grid that started at the epoch, none skipped:
        // 2 virtual seconds, in well under that on the wall (not asserted: the machine is shared).
        #expect(ticks.map(\.sequence) == Array(1...120))
        #expect(ticks.allSatisfy { $0.skipped == 0 })
        for (index, tick) in ticks.enumerated() {
            #expect(abs(tick.timestamp - (Self.epoch + 0.5 + Double(index + 1) / 60)) < 2e-9)
        }
        // While the link ticks, its answers move time; Advance is refused and says why.
        do {
            _ = try await connection.advance(seconds: 1)
            Issue.record("Advance succeeded while a link ticks")
        } catch {
            #expect(error.status == .failedPrecondition)
        }
        // The last tick is unanswered: time stands at it.
        #expect(try await connection.state().now == ticks.last?.timestamp)
        _ = try await link.pause()
        let now = try #require(try await connection.state().now)
        let advanced = try await connection.advance(seconds: 2)
        #expect(abs(advanced - (now + 2)) < 1e-9)
        await connection.close()
    }

    @Test func aSilentLinkIsWaitedForAtMostTheTimeoutThenItsIntervalsAreSkipped() async throws {
        let daemon = try await Daemon.start(["--clock", "virtual", "--display", "fixed-60", "--virtual-timeout", "0.2"])
        defer { daemon.kill() }
        let connection = try await daemon.connect()
        let link = try await connection.register(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60))
        var ticks: [TickNotification] = []
        for await tick in link.ticks {
            ticks.append(tick)
            // Answer the first tick (the link paces itself with FrameDone), not the second:
            // the daemon waits 0.2 s of wall time, moves on, and skips the link's intervals
            // while it stays busy, each after another 0.2 s; answered, it ticks again.
            if ticks.count == 1 { try await link.frameDone(sequence: tick.sequence) }
            if ticks.count == 2 {
                let before = try #require(try await connection.state().now)
                #expect(before == tick.timestamp)
                try await Task.sleep(for: .milliseconds(700))
                let after = try #require(try await connection.state().now)
                // Two or three timeouts passed (wall time, loosely): time moved on by one vsync each.
                #expect(after >= before + 1.0 / 60 - 1e-9 && after <= before + 5.0 / 60 + 1e-9, "moved from \(before) to \(after)")
                try await link.frameDone(sequence: tick.sequence)
            }
            if ticks.count == 3 { break }
        }
        #expect(ticks[1].skipped == 0)
        #expect(ticks[2].skipped >= 1)
        #expect(ticks[2].sequence == ticks[1].sequence + ticks[2].skipped + 1)
        #expect(daemon.log.contains("event=virtual-answer-timeout"))
        await connection.close()
    }

    @Test func aMonotonicDaemonRefusesAdvanceAndSaysWhichClockItRuns() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let connection = try await daemon.connect()
        #expect(try await connection.state().clock == "monotonic")
        do {
            _ = try await connection.advance(seconds: 1)
            Issue.record("Advance succeeded on a monotonic daemon")
        } catch {
            #expect(error.status == .failedPrecondition)
            #expect("\(error)".contains("--clock virtual"))
        }
        for bad: JSONValue in [["seconds": -1], ["seconds": 100_000], ["seconds": "1"], [:]] {
            do {
                _ = try await connection.call(.advance, params: bad)
                Issue.record("Advance accepted \(bad)")
            } catch {
                #expect(error.status == .invalidArgument)
            }
        }
        await connection.close()
    }
}

extension VirtualClockTests {
    @Test func advanceStopsShortOfWhatNanosecondInstantsHold() async throws {
        let daemon = try await Daemon.start(["--clock", "virtual", "--virtual-epoch", "1000000000"])
        defer { daemon.kill() }
        let client = try TestProcess(
            executable: "/usr/bin/env",
            arguments: ["python3", Paths.packageRoot.appendingPathComponent("Tests/IntegrationTests/Scripts/advance_to_the_end.py").path, daemon.socket],
            stderrURL: daemon.directory.appendingPathComponent("advance.log")
        )
        #expect(await client.waitForExit(timeout: .seconds(120)) == 0, "\(client.stderr)")
        let lines = client.output
        try #require(lines.count == 2)
        // 11,574 days from 10⁹ s reach 1,999,993,600 s; one more would pass 2·10⁹ s.
        #expect(lines[0].contains(#""result":{"now":1999993600.0}"#), "\(lines[0])")
        #expect(lines[1].contains(#""status":"OUT_OF_RANGE""#) && lines[1].contains("may not pass 2000000000 s"), "\(lines[1])")
        // The daemon still answers, at the last instant it reached.
        let connection = try await daemon.connect()
        #expect(try await connection.state().now == 1_999_993_600)
        await connection.close()
    }
}

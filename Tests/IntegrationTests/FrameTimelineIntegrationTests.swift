import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// One line `Scripts/timeline_client.py` prints.
private struct TimelineLine: Decodable {
    struct Entry: Decodable {
        var vsyncId: UInt64
        var deadline: Double
        var presentationTime: Double
    }

    var kind: String
    var sequence: UInt64?
    var timestamp: Double?
    var targetTimestamp: Double?
    var targetPresentationTimestamp: Double?
    var callbackRate: Double?
    var refreshRate: Double?
    var skipped: UInt64?
    var timelines: [Entry]?
    var vsyncId: UInt64?
    var presentationTime: Double?
    var presentedTime: Double?
    var expectedTime: Double?
    var hitch: Double?
    var status: String?
    var message: String?
    var field: String?

    static func parse(_ lines: [String]) -> [TimelineLine] {
        lines.compactMap { try? JSONDecoder().decode(TimelineLine.self, from: Data($0.utf8)) }
    }
}

/// Frame timelines and frame latency (issue 14 §1-2) across processes: a real daemon, a
/// Python client process (the Python library) holding the link, and this process's Swift
/// client observing or holding another link.
@Suite("frame timelines and frame latency across processes", .serialized)
struct FrameTimelineIntegrationTests {
    private static var script: String {
        Paths.packageRoot.appendingPathComponent("Tests/IntegrationTests/Scripts/timeline_client.py").path
    }

    private func client(_ daemon: Daemon, _ arguments: [String]) throws -> TestProcess {
        try TestProcess(
            executable: "/usr/bin/env", arguments: ["python3", Self.script, "--socket", daemon.socket] + arguments,
            stderrURL: daemon.directory.appendingPathComponent("timelines-\(UUID().uuidString.prefix(6)).log")
        )
    }

    @Test("three timelines at latency 2: entries one interval apart, the first at targetTimestamp; GetState from another process echoes both")
    func timelinesAndLatency() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let process = try client(daemon, ["--min", "80", "--max", "120", "--preferred", "120", "--timelines", "3", "--latency", "2", "--ticks", "40"])
        #expect(await process.firstLine { $0.contains("\"registered\"") } != nil)
        let observer = try await daemon.connect()
        let state = try await observer.waitForState { !$0.displays[0].links.isEmpty }
        let link = try #require(state.displays[0].links.first)
        #expect(link.timelines == 3 && link.preferredFrameLatency == 2)
        await observer.close()
        #expect(await process.waitForExit() == 0)
        let ticks = TimelineLine.parse(process.output).filter { $0.kind == "tick" }
        #expect(ticks.count == 40)
        for tick in ticks {
            let interval = 1 / (tick.callbackRate ?? 1)
            let entries = try #require(tick.timelines)
            // Left out only if its deadline passed before the daemon sent the tick: never the last.
            #expect(!entries.isEmpty && entries.count <= 3)
            #expect(abs((tick.targetPresentationTimestamp ?? 0) - ((tick.timestamp ?? 0) + 2 * interval)) < 2e-9 || tick.refreshRate != 120)
            if entries.count == 3 {
                #expect(abs(entries[0].deadline - (tick.targetTimestamp ?? 0)) < 2e-9)
                #expect(abs(entries[0].presentationTime - (tick.targetPresentationTimestamp ?? 0)) < 2e-9)
            }
            for (earlier, later) in zip(entries, entries.dropFirst()) {
                #expect(later.vsyncId > earlier.vsyncId)
                #expect(later.deadline > earlier.deadline)
            }
            for entry in entries where tick.refreshRate == 120 {
                #expect(abs(entry.presentationTime - entry.deadline - interval) < 2e-9)
            }
        }
    }

    @Test("Present with vsyncId from a client process: shown at that timeline's presentationTime, expectedTime is it")
    func presentAimedAtALaterTimeline() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let process = try client(daemon, ["--min", "120", "--max", "120", "--preferred", "120", "--timelines", "3", "--ticks", "30", "--aim", "20"])
        #expect(await process.waitForExit() == 0)
        let lines = TimelineLine.parse(process.output)
        let aimed = try #require(lines.first { $0.kind == "aimed" })
        let shown = try #require(lines.first { $0.kind == "presented" && $0.sequence == aimed.sequence })
        #expect(shown.expectedTime.map { abs($0 - (aimed.presentationTime ?? 0)) < 2e-9 } == true)
        // Held until the aimed vsync; later only if the machine delayed the Present past its deadline.
        let presented = try #require(shown.presentedTime)
        #expect(presented >= (aimed.presentationTime ?? 0) - 2e-9)
        #expect(abs((shown.hitch ?? -1) - (presented - (shown.expectedTime ?? 0))) < 2e-9 || shown.hitch == 0)
        // Every tick before the aimed one names the vsync ids it offered, and the aimed id is one of them.
        let tick = try #require(lines.first { $0.kind == "tick" && $0.sequence == aimed.sequence })
        #expect(tick.timelines?.contains { $0.vsyncId == aimed.vsyncId } == true)
    }

    @Test("timelines 8 and preferredFrameLatency 3 are refused with INVALID_ARGUMENT naming the bound, from a client process")
    func validationAcrossProcesses() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let tooMany = try client(daemon, ["--timelines", "8"])
        #expect(await tooMany.waitForExit() == 0)
        let error = try #require(TimelineLine.parse(tooMany.output).first { $0.kind == "error" })
        #expect(error.status == "InvalidArgument")
        #expect(error.message?.contains("timelines must be an integer in 1...7, got 8") == true, "\(error.message ?? "")")
        let latency = try client(daemon, ["--latency", "3"])
        #expect(await latency.waitForExit() == 0)
        let refused = try #require(TimelineLine.parse(latency.output).first { $0.kind == "error" })
        #expect(refused.message?.contains("preferredFrameLatency must be an integer in 1...2, got 3") == true)
    }

    @Test("the Swift client: register with timelines and latency, its ticks carry them; setFrameTiming goes back to the plain tick")
    func swiftClient() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let connection = try await daemon.connect()
        let handle = try await connection.register(
            range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60), timelines: 4, preferredFrameLatency: 2
        )
        var iterator = handle.ticks.makeAsyncIterator()
        let tick = try #require(await iterator.next())
        #expect(tick.timelines.count >= 1 && tick.timelines.count <= 4)
        #expect(abs(tick.targetPresentationTimestamp - (tick.timestamp + 2 / tick.callbackRate)) < 2e-9)
        let status = try await handle.setFrameTiming(timelines: 1, preferredFrameLatency: 1)
        #expect(status.timelines == 1 && status.preferredFrameLatency == 1)
        // Ticks already sent may still carry the old timing: wait for a plain one.
        var plain: TickNotification?
        while let next = await iterator.next() {
            if next.timelines.isEmpty { plain = next; break }
        }
        let latest = try #require(plain)
        #expect(latest.targetPresentationTimestamp == latest.targetTimestamp)
        await connection.close()
    }

    @Test("a decided decrease across processes: another process pauses the 120 Hz holder; the timelines predict the ticks that follow")
    func decidedDecrease() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let started = daemon.directory.appendingPathComponent("paused-\(UUID().uuidString.prefix(6))")
        let process = try client(
            daemon, ["--min", "40", "--max", "120", "--timelines", "7", "--ticks", "60", "--no-frame-done", "--wait-file", started.path]
        )
        #expect(await process.firstLine { $0.contains("\"registered\"") } != nil)
        let holder = try await daemon.connect()
        let held = try await holder.register(range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), highFrameRate: true)
        _ = try await holder.waitForState { $0.displays[0].refreshRate == 120 }
        _ = try await held.pause()
        _ = FileManager.default.createFile(atPath: started.path, contents: nil)
        #expect(await process.waitForExit() == 0)
        await holder.close()
        let ticks = TimelineLine.parse(process.output).filter { $0.kind == "tick" }
        // Some 120 Hz tick listed frames after the change to a lower rate. (The link alone ran
        // lower before the holder came, and a loaded machine may deliver some of those ticks
        // first: the change is the first lower tick after a 120 Hz one.)
        let first120 = try #require(ticks.firstIndex { $0.refreshRate == 120 })
        let change = try #require(ticks[first120...].firstIndex { ($0.refreshRate ?? 120) < 120 })
        let spanning = ticks[first120..<change].filter { ($0.timelines?.last?.deadline ?? 0) >= (ticks[change].timestamp ?? .infinity) - 1e-6 }
        #expect(!spanning.isEmpty)
        // Each listed deadline is a later tick's timestamp; where the loaded machine made the
        // client skip an interval, that tick is missing, so then only some must match.
        let stamps = ticks.compactMap(\.timestamp)
        let listed = spanning.flatMap { $0.timelines ?? [] }.filter { $0.deadline <= stamps.last! }
        let matched = listed.filter { entry in stamps.contains { abs($0 - entry.deadline) < 2e-9 } }
        #expect(!listed.isEmpty && !matched.isEmpty)
        if ticks.allSatisfy({ ($0.skipped ?? 0) == 0 }) {
            #expect(matched.count == listed.count, "\(listed.count - matched.count) listed deadlines are no tick's timestamp")
        }
    }
}

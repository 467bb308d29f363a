import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// Boosts and adaptive links across real processes: a raw-socket client holds the link,
/// other processes (framectl, a Swift client) boost it or watch the decision.
@Suite("boosts and adaptive links across processes", .serialized)
struct ContentRateTests {
    @Test("framectl boost from another process raises a link to 120 Hz, its ticks say boosted, then it falls back")
    func boostFromAnotherProcess() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let client = try daemon.rawClient("ticks", ["--min", "10", "--max", "120", "--preferred", "60", "--entitled", "--seconds", "2.5"])
        let registered = try #require(await client.firstLine { $0.contains("registered") })
        #expect(registered.contains(#""refreshRate": 60.0"#))
        // Wait until it ticks, then boost it from framectl (another process of the same user).
        #expect(await client.firstLine { $0.contains("\"sequence\"") } != nil)
        let boost = try await daemon.framectl(["boost", "1", "--duration", "0.4"])
        #expect(boost.status == 0, "framectl boost: \(boost.stderr)")
        let line = try #require(boost.stdout.first)
        #expect(line.contains("link 1 boosted until"))
        #expect(line.contains("refresh 120 Hz, callbacks 120 Hz"))
        #expect(await client.waitForExit() == 0)

        let ticks = PrintedTick.parse(client.output)
        let boosted = ticks.filter { $0.boosted == true }
        #expect(!boosted.isEmpty)
        #expect(boosted.allSatisfy { $0.callbackRate == 120 })
        // A boost of 0.4 s at 120 Hz: about 48 boosted ticks (loose: the machine is shared).
        #expect(boosted.count >= 20 && boosted.count <= 60, "\(boosted.count) boosted ticks")
        let lastBoosted = try #require(boosted.last)
        let after = ticks.filter { $0.timestamp > lastBoosted.timestamp }
        #expect(!after.isEmpty && after.allSatisfy { $0.boosted == nil })
        // Back to 60 Hz callbacks at once; the panel follows after the 250 ms dwell.
        #expect(after.allSatisfy { $0.callbackRate == 60 })
        let panelBack = try #require(after.first { $0.refreshRate == 60 })
        #expect(panelBack.timestamp - lastBoosted.timestamp >= 0.25 - 0.01)
    }

    @Test("an adaptive client taking 12 ms a frame at 120 Hz is stepped down; another process sees decision.limited overrun")
    func adaptiveStepDownAcrossProcesses() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let slow = try daemon.rawClient(
            "ticks", ["--min", "120", "--max", "120", "--preferred", "120", "--entitled", "--adaptive", "--frame-ms", "12", "--seconds", "3"]
        )
        #expect(await slow.firstLine { $0.contains("registered") } != nil)
        let observer = try await daemon.connect()
        let state = try await observer.waitForState(timeout: .seconds(10)) { !($0.displays[0].decision?.limited.isEmpty ?? true) }
        let limit = try #require(state.displays[0].decision?.limited.first)
        #expect(limit.by == .overrun)
        #expect(limit.wanted == 120)
        // 12 ms (plus scheduling) fits 60 Hz; on a loaded machine it may fit only a lower even rate.
        #expect([60, 40, 30].contains(limit.got), "stepped to \(limit.got) Hz")
        #expect(state.displays[0].reason.contains("kept missing their deadline"))
        #expect(await slow.waitForExit() == 0)
        let ticks = PrintedTick.parse(slow.output)
        #expect(ticks.contains { $0.callbackRate < 120 })
        #expect(daemon.log.contains("stepped down to"))
        await observer.close()
    }

    @Test("a non-adaptive client taking 12 ms a frame keeps 120 Hz and skips intervals")
    func nonAdaptiveSkipsAcrossProcesses() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let slow = try daemon.rawClient(
            "ticks", ["--min", "120", "--max", "120", "--preferred", "120", "--entitled", "--frame-ms", "12", "--seconds", "1.5"]
        )
        #expect(await slow.waitForExit() == 0)
        let ticks = PrintedTick.parse(slow.output)
        #expect(ticks.count > 20)
        #expect(ticks.allSatisfy { $0.callbackRate == 120 })
        #expect(ticks.dropFirst(2).contains { $0.skipped > 0 })
    }
}

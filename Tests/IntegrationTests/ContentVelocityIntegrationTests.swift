import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// The panel rate following content velocity across real processes (issue 13 §2): a
/// raw-socket client reports contentVelocity with each FrameDone, another process
/// watches the state.
@Suite("content velocity across processes", .serialized)
struct ContentVelocityIntegrationTests {
    @Test("400, 200, 100 pt/s: the panel runs at 120, 80, 60 Hz while the callbacks stay at 120 Hz; GetState says why")
    func panelFollowsVelocity() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let client = try daemon.rawClient(
            "ticks",
            ["--min", "120", "--max", "120", "--preferred", "120", "--entitled", "--label", "anim", "--velocity", "0:400,1:200,2:100",
             "--seconds", "3.2"]
        )
        #expect(await client.firstLine { $0.contains("registered") } != nil)
        // Another process sees the panel at 80 Hz for 200 pt/s, with the velocity that decided.
        let observer = try await daemon.connect()
        let state = try await observer.waitForState(timeout: .seconds(10)) { $0.displays[0].panelRate == 80 }
        let display = state.displays[0]
        #expect(display.refreshRate == 120)
        let limit = try #require(display.panelDecision?.limited.first)
        #expect(limit.by == .velocity && limit.wanted == 120 && limit.got == 80 && limit.contentVelocity == 200)
        #expect(display.links.first?.callbackRate == 120)
        await observer.close()
        #expect(await client.waitForExit() == 0)

        let ticks = PrintedTick.parse(client.output)
        let first = try #require(ticks.first)
        #expect(ticks.allSatisfy { $0.callbackRate == 120 })
        func phase(_ from: Double, _ to: Double) -> [PrintedTick] {
            ticks.filter { $0.timestamp - first.timestamp >= from && $0.timestamp - first.timestamp < to }
        }
        // Windows well past each change's 250 ms dwell (loose: the machine is shared).
        for (from, to, panel) in [(0.3, 0.9, 120.0), (1.6, 1.9, 80.0), (2.6, 3.0, 60.0)] {
            let window = phase(from, to)
            #expect(!window.isEmpty, "no ticks in \(from)-\(to) s")
            #expect(window.allSatisfy { $0.refreshRate == panel }, "\(from)-\(to) s: \(Set(window.map(\.refreshRate)))")
            // duration is the panel's period; targetTimestamp stays one 120 Hz grid period after timestamp.
            #expect(window.allSatisfy { abs($0.duration - 1 / panel) < 1e-6 })
            #expect(window.allSatisfy { abs($0.targetTimestamp - $0.timestamp - 1.0 / 120) < 1e-6 })
        }
    }
}

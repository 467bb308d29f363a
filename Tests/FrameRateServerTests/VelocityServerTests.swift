import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import FrameRateTesting
import NIOCore
import Testing

@testable import FrameRateServer

/// `contentVelocity` through the daemon's dispatcher and tick plane, on the stepped
/// harness: FrameDone and Present take it (validated at the boundary), the tick plane
/// wakes for the panel change, ticks carry the panel rate with callbacks on the grid,
/// and GetState reports panelRate and panelDecision.
@Suite struct VelocityServerTests {
    @Test func frameDoneWithContentVelocityLowersThePanelWhileCallbacksStay() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(120, 120, 120, extra: #","highFrameRate":true"#)
        var ticks: [TickNotification] = []
        for _ in 0..<60 {
            try server.runNextVsync()
            for line in try client.lines() {
                let tick = try TickNotification(json: notificationParams(line, .tick))
                ticks.append(tick)
                _ = try client.result(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence),"contentVelocity":200}"#)
            }
        }
        #expect(ticks.count >= 50)
        #expect(ticks.allSatisfy { $0.callbackRate == 120 })
        // After the 250 ms dwell (30 vsyncs at 120 Hz) the panel is at 80 Hz.
        let lowered = ticks.filter { $0.refreshRate == 80 }
        #expect(!lowered.isEmpty)
        #expect(lowered.allSatisfy { abs($0.duration - 0.0125) < 1e-9 && abs($0.targetTimestamp - $0.timestamp - 1.0 / 120) < 1e-6 })
        let state = try CompositorState(json: server.core.currentState(for: Viewer(scope: .everyone)).jsonValue)
        let display = state.displays[0]
        #expect(display.refreshRate == 120 && display.panelRate == 80)
        let limit = try #require(display.panelDecision?.limited.first)
        #expect(limit.by == .velocity && limit.contentVelocity == 200 && limit.got == 80)
        #expect(display.residency.contains { $0.rate == 80 })
    }

    @Test(arguments: [
        #"{"link":1,"sequence":1,"contentVelocity":-1}"#, #"{"link":1,"sequence":1,"contentVelocity":1e400}"#,
        #"{"link":1,"sequence":1,"contentVelocity":"fast"}"#, #"{"link":1,"sequence":1,"contentVelocity":true}"#,
    ])
    func aBadContentVelocityIsInvalidArgumentNamingTheField(_ params: String) throws {
        let server = ServerHarness()
        let client = try server.connect()
        for method in [V1Method.frameDone, .present] {
            let error = try client.error(method, params)
            #expect(error.code == -32602)
            #expect(error.data?["status"] == "INVALID_ARGUMENT")
            #expect(error.data?["field"]?.stringValue == "contentVelocity", "\(error.message)")
            #expect(error.message.contains("contentVelocity"))
        }
    }

    @Test func presentWithContentVelocityCountsToo() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(120, 120, 120, extra: #","highFrameRate":true"#)
        for _ in 0..<60 {
            try server.runNextVsync()
            for line in try client.lines() where line.contains(V1Method.tick.rawValue) {
                let tick = try TickNotification(json: notificationParams(line, .tick))
                _ = try client.result(.present, #"{"link":\#(link),"sequence":\#(tick.sequence),"contentVelocity":100}"#)
            }
        }
        #expect(try server.compositor.panelRate() == 60)
        #expect(try server.compositor.refreshRate() == 120)
    }
}

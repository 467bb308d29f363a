import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// `framectl status` while content velocity lowers the panel: the header names the panel
/// rate, a `panel:` line says why, and nothing changes without it.
@Suite struct PanelRenderingTests {
    static func display(panelRate: Double?, panelDecision: DecisionState?) throws -> DisplayState {
        var json: JSONValue = [
            "id": 0, "profile": "promotion-phone", "supportedRates": [120.0, 80.0, 60.0], "refreshRate": 120.0,
            "reason": .string(Fixture.reason), "caps": ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"],
            "links": [Fixture.scrollLink], "decision": Fixture.decision.jsonValue,
        ]
        if case .object(var object) = json {
            object["panelRate"] = panelRate.map { JSONValue($0) } ?? .null
            object["panelDecision"] = panelDecision?.jsonValue ?? .null
            json = .object(object)
        }
        return try DisplayState(json: json)
    }

    @Test func thePanelRateAndWhyAreShown() throws {
        var limit = LinkLimit(link: LinkID(rawValue: 3), by: .velocity, wanted: 120, got: 80)
        limit.contentVelocity = 200
        let panel = DecisionState(
            rate: 80, rule: .exact, deciders: [LinkID(rawValue: 3)], cap: nil, limited: [limit], pending: nil,
            reason: "80 Hz is the lowest rate that serves every link exactly; it is limited to 80 Hz on the panel by its content velocity, 200 pt/s"
        )
        let lines = StatusText.lines(for: try Self.display(panelRate: 80, panelDecision: panel), now: 5000)
        #expect(lines[0] == "display 0: 120 Hz (panel 80 Hz)")
        let text = lines.joined(separator: "\n")
        #expect(text.contains("  panel:   80 Hz, content velocity in play (callbacks stay on the 120 Hz grid):"), "\(text)")
        #expect(text.contains("200 pt/s"))
        #expect(DecisionText.limit(limit, cap: nil) == "link 3 wants 120 Hz, gets 80 Hz (on the panel: its content velocity is 200 pt/s)")
    }

    @Test func withoutVelocityNothingChanges() throws {
        let lines = StatusText.lines(for: try Self.display(panelRate: 120, panelDecision: nil), now: 5000)
        #expect(lines[0] == "display 0: 120 Hz")
        #expect(!lines.contains { $0.contains("panel:") })
        // An older daemon (no panelRate) renders as before too.
        #expect(StatusText.lines(for: try Self.display(panelRate: nil, panelDecision: nil), now: 5000)[0] == "display 0: 120 Hz")
    }
}

import FrameRateModel
import FrameRateProtocol
import Testing

/// The wire additions of issue 13: `decision.boosted`, a `velocity` limit with its
/// `contentVelocity`, GetState's `panelRate`/`panelDecision` and each link's `adaptive`
/// and `boostedUntil`.
@Suite("Velocity and boost fields on the wire")
struct VelocityAndBoostWireTests {
    static let panel: DecisionState = {
        var limit = LinkLimit(link: LinkID(rawValue: 1), by: .velocity, wanted: 120, got: 80)
        limit.contentVelocity = 200
        return DecisionState(
            rate: 80, rule: .exact, deciders: [LinkID(rawValue: 1)], cap: nil, limited: [limit], pending: nil,
            reason: "80 Hz is the lowest rate that serves every link exactly"
        )
    }()

    @Test("boosted is on the wire only when true, and parses back")
    func boosted() throws {
        var decision = DecisionMessageTests.exact
        #expect(!decision.jsonValue.jsonString.contains("boosted"))
        decision.boosted = true
        #expect(decision.jsonValue.jsonString.hasSuffix(#","boosted":true}"#) || decision.jsonValue.jsonString.contains(#""boosted":true"#))
        #expect(try DecisionState(json: try JSONValue(parsing: decision.jsonValue.jsonString)) == decision)
    }

    @Test("a velocity limit carries contentVelocity; others do not")
    func velocityLimit() throws {
        let text = Self.panel.jsonValue.jsonString
        #expect(text.contains(#"{"link":1,"by":"velocity","wanted":120.0,"got":80.0,"contentVelocity":200.0}"#), "\(text)")
        #expect(!DecisionMessageTests.exact.jsonValue.jsonString.contains("contentVelocity"))
        #expect(try DecisionState(json: try JSONValue(parsing: text)) == Self.panel)
    }

    @Test("GetState: panelRate, panelDecision, and each link's adaptive and boostedUntil round-trip")
    func displayFields() throws {
        let json: JSONValue = [
            "id": 0, "profile": "promotion-phone", "supportedRates": [120.0, 80.0], "refreshRate": 120.0, "reason": "r",
            "caps": ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"],
            "links": [
                [
                    "link": 1, "range": ["minimum": 120.0, "maximum": 120.0, "preferred": 120.0], "paused": false, "callbackRate": 120.0,
                    "label": nil, "highFrameRate": true, "pid": 7, "uid": 1000, "command": "app", "since": 100.25,
                    "limitedBy": nil, "wanted": nil, "got": nil, "adaptive": true, "boostedUntil": 101.5,
                ]
            ],
            "decision": DecisionMessageTests.exact.jsonValue, "panelRate": 80.0, "panelDecision": Self.panel.jsonValue,
        ]
        let display = try DisplayState(json: json)
        #expect(display.panelRate == 80 && display.panelDecision == Self.panel)
        #expect(display.links[0].adaptive && display.links[0].boostedUntil == 101.5)
        #expect(try DisplayState(json: try JSONValue(parsing: display.jsonValue.jsonString)) == display)
        #expect(display.jsonValue["links"]?[0]?["boostedUntil"]?.numberValue?.text == "101.500000000")
        #expect(display.links[0].awaitingFrame == nil && display.jsonValue["links"]?[0]?["awaitingFrame"] == .null)
        // An older daemon's display: no panel fields, links neither adaptive nor boosted.
        var older = json
        if case .object(var object) = older {
            object["panelRate"] = nil
            object["panelDecision"] = nil
            older = .object(object)
        }
        let parsed = try DisplayState(json: older)
        #expect(parsed.panelRate == nil && parsed.panelDecision == nil)
    }

    @Test("GetState: a link's awaitingFrame round-trips; a bad one names its field")
    func awaitingFrame() throws {
        let frame: JSONValue = ["sequence": 17, "since": 4931.25, "skipped": 42]
        let link: JSONValue = [
            "link": 2, "range": ["minimum": 60.0, "maximum": 60.0, "preferred": 60.0], "paused": false, "callbackRate": 60.0,
            "label": nil, "highFrameRate": false, "pid": 7, "uid": 1000, "command": "app", "awaitingFrame": frame,
        ]
        let state = try LinkState(json: link)
        #expect(state.awaitingFrame == AwaitingFrameState(sequence: 17, since: 4931.25, skipped: 42))
        #expect(state.jsonValue["awaitingFrame"]?.jsonString == #"{"sequence":17,"since":4931.250000000,"skipped":42}"#)
        #expect(try LinkState(json: try JSONValue(parsing: state.jsonValue.jsonString)) == state)
        var bad = link
        if case .object(var object) = bad {
            object["awaitingFrame"] = ["sequence": -1, "since": 1.0, "skipped": 0]
            bad = .object(object)
        }
        #expect(throws: RPCError.self) { try LinkState(json: bad) }
        do {
            _ = try LinkState(json: bad)
        } catch {
            #expect(error.message.contains("awaitingFrame.sequence"), "\(error.message)")
        }
    }
}

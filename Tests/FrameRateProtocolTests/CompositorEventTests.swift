import FrameRateModel
import FrameRateProtocol
import Testing

@Suite("CompositorEvent params round trip")
struct CompositorEventTests {
    static func link() throws -> LinkState {
        try LinkState(
            json: [
                "link": 3, "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 120.0], "paused": false,
                "callbackRate": 120.0, "label": "scroll", "highFrameRate": true, "pid": 42, "uid": 1000, "command": "game",
            ]
        )
    }

    static var events: [CompositorEvent] {
        get throws {
            let link = try Self.link()
            var paused = link
            paused.paused = true
            paused.label = nil
            paused.peer?.command = nil
            // Another user's link, as an unprivileged viewer sees it: no holder, no label.
            var hidden = link
            hidden.peer = nil
            hidden.label = nil
            return [
                .refreshRateChanged(display: DisplayID(rawValue: 0), from: 60, to: 120, reason: "120 Hz is the lowest rate"),
                .refreshRateChanged(display: DisplayID(rawValue: 1), from: 23.976, to: 10, reason: ""),
                .refreshRateChanged(
                    display: DisplayID(rawValue: 0), from: 120, to: 60, reason: "Low Power Mode caps the display at 60 Hz",
                    decision: DecisionMessageTests.capped, at: 2048.125
                ),
                .linkAdded(display: DisplayID(rawValue: 0), link: link),
                .linkUpdated(display: DisplayID(rawValue: 2), link: paused),
                .linkAdded(display: DisplayID(rawValue: 0), link: hidden),
                .linkRemoved(display: DisplayID(rawValue: 0), link: LinkID(rawValue: 7), reason: "connection closed"),
                .capsChanged(display: DisplayID(rawValue: 0), caps: DisplayCaps(lowPowerMode: true, thermalState: .critical)),
                .capsChanged(display: DisplayID(rawValue: 1), caps: DisplayCaps(limitFrameRate: true, thermalState: .fair)),
            ]
        }
    }

    @Test("every kind: init(params:) inverts params(watch:), also after a trip through the wire text")
    func roundTrip() throws {
        let events = try Self.events
        #expect(Set(events.map(\.kind)) == Set(CompositorEvent.kinds))
        for event in events {
            let params = event.params(watch: 9)
            #expect(try CompositorEvent(params: params) == event)
            let reparsed = try JSONValue(parsing: params.jsonString)
            #expect(try CompositorEvent(params: reparsed) == event, "\(params.jsonString)")
        }
    }

    @Test("a long arbitration reason survives (reasons are not labels)")
    func longReason() throws {
        let reason = String(repeating: "a lower rate would not serve link 3 'scroll' (80, 120, 120); ", count: 20)
        let event = CompositorEvent.refreshRateChanged(display: DisplayID(rawValue: 0), from: 60, to: 120, reason: reason)
        #expect(try CompositorEvent(params: event.params(watch: 1)) == event)
    }

    @Test("fields a newer daemon adds are ignored; a missing reason reads as empty")
    func tolerant() throws {
        let event = try CompositorEvent(params: ["watch": 1, "kind": "linkRemoved", "display": 0, "link": 4, "extra": true])
        #expect(event == .linkRemoved(display: DisplayID(rawValue: 0), link: LinkID(rawValue: 4), reason: ""))
    }

    @Test(
        "malformed or unknown events name the field",
        arguments: [
            (["watch": 1, "display": 0] as JSONValue, "kind"),
            (["watch": 1, "kind": "displayAdded", "display": 0], "kind"),
            (["watch": 1, "kind": "refreshRateChanged", "from": 60, "to": 120], "display"),
            (["watch": 1, "kind": "refreshRateChanged", "display": -1, "from": 60, "to": 120], "display"),
            (["watch": 1, "kind": "refreshRateChanged", "display": 0, "to": 120], "from"),
            (["watch": 1, "kind": "refreshRateChanged", "display": 0, "from": 60, "to": "120"], "to"),
            (["watch": 1, "kind": "refreshRateChanged", "display": 0, "from": 60, "to": 120, "decision": ["rate": 120]], "decision.rule"),
            (["watch": 1, "kind": "refreshRateChanged", "display": 0, "from": 60, "to": 120, "at": "now"], "at"),
            (["watch": 1, "kind": "linkAdded", "display": 0], "link"),
            (["watch": 1, "kind": "linkRemoved", "display": 0, "link": 0], "link"),
            (["watch": 1, "kind": "capsChanged", "display": 0], "caps"),
            (["watch": 1, "kind": "capsChanged", "display": 0, "caps": ["thermalState": "hot"]], "caps.thermalState"),
        ] as [(JSONValue, String)]
    )
    func malformed(_ params: JSONValue, field: String) {
        #expect(throws: RPCError.self) { try CompositorEvent(params: params) }
        do throws(RPCError) {
            _ = try CompositorEvent(params: params)
        } catch {
            #expect(error.code == RPCError.invalidParamsCode)
            #expect(error.data?["field"]?.stringValue == field, "\(error.message)")
        }
    }

    @Test("params that are not an object are rejected")
    func notAnObject() {
        #expect(throws: RPCError.self) { try CompositorEvent(params: [1, 2]) }
        #expect(throws: RPCError.self) { try CompositorEvent(params: nil) }
    }
}

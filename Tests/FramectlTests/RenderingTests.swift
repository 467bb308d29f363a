import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// Fixtures, read through the same parsers framectl uses on the daemon's answers.
enum Fixture {
    static let scrollLink: JSONValue = [
        "link": 3, "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 120.0], "paused": false, "callbackRate": 120.0,
        "label": "scroll", "highFrameRate": true, "pid": 42, "uid": 1000, "command": "game", "since": 4930.5,
    ]
    static let monitorLink: JSONValue = [
        "link": 12, "range": ["minimum": 10.0, "maximum": 60.0, "preferred": 0.0], "paused": true, "callbackRate": 60.0,
        "label": nil, "highFrameRate": false, "pid": 4242, "uid": 0, "command": nil,
    ]
    static let limitedLink: JSONValue = [
        "link": 14, "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 0.0], "paused": false, "callbackRate": 60.0,
        "label": "menu", "highFrameRate": false, "pid": 77, "uid": 1000, "command": "settings", "since": 5000.0,
        "limitedBy": "entitlement", "wanted": 120.0, "got": 60.0,
    ]
    /// Display 0's decision: 120 Hz held by link 3, link 14 limited by the entitlement, no cap.
    static let decision = DecisionState(
        rate: 120, rule: .exact, deciders: [LinkID(rawValue: 3)], cap: nil,
        limited: [LinkLimit(link: LinkID(rawValue: 14), by: .entitlement, wanted: 120, got: 60)], pending: nil, reason: reason
    )
    /// Display 1's decision: Low Power Mode caps it, a drop to 10 Hz is pending.
    static let cappedDecision = DecisionState(
        rate: 10, rule: .idle, deciders: [], cap: DecisionCap(source: .lowPower, hz: 60), limited: [],
        pending: DecisionPending(rate: 10, at: 5012.5), reason: "no link votes"
    )
    static let reason = "120 Hz is the lowest rate that serves every link exactly; a lower rate would not serve link 3 'scroll' (80, 120, 120)"

    static func state() throws -> CompositorState {
        try CompositorState(
            json: [
                "displays": [
                    [
                        "id": 0, "profile": "promotion-phone",
                        "supportedRates": [120.0, 80.0, 60.0, 48.0, 40.0, 30.0, 24.0, 20.0, 16.0, 15.0, 12.0, 10.0],
                        "refreshRate": 120.0, "reason": .string(reason),
                        "caps": ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"],
                        "links": [scrollLink, monitorLink, limitedLink], "decision": decision.jsonValue,
                    ],
                    [
                        "id": 1, "profile": "", "supportedRates": [], "refreshRate": 60.0, "reason": "",
                        "caps": ["lowPowerMode": true, "limitFrameRate": false, "thermalState": "critical"], "links": [],
                        "decision": cappedDecision.jsonValue,
                    ],
                ]
            ]
        )
    }
}

@Suite("framectl status, caps, event and catalog text")
struct RenderingTests {
    @Test("status: rate, profile, reason, the decision (rule, holders, cap, limited, pending), caps, links; 80 columns")
    func status() throws {
        let lines = StatusText.lines(for: try Fixture.state(), now: 5012.25)
        #expect(
            lines == [
                "display 0: 120 Hz",
                "  profile: promotion-phone (120, 80, 60, 48, 40, 30, 24, 20, 16, 15, 12, 10 Hz)",
                "  reason:  120 Hz is the lowest rate that serves every link exactly; a lower",
                "           rate would not serve link 3 'scroll' (80, 120, 120)",
                "  rule:    exact (step 2: the lowest rate that serves every link exactly)",
                "  held by: link 3 (pid 42, game)",
                "  cap:     none",
                "  limited: link 14 wants 120 Hz, gets 60 Hz (no high-frame-rate entitlement)",
                "  pending: none",
                "  caps:    low power off, limit frame rate off, thermal nominal (no cap)",
                "  links:",
                "    LINK  RANGE HZ            CALLBACK  LABEL   PID   UID   AGE    COMMAND",
                "    3     (80, 120, 120) hfr  120 Hz    scroll  42    1000  1m21s  game",
                "    12    (10, 60, 0)         paused    -       4242  0     -      -",
                "    14    (80, 120, 0)        60 Hz     menu    77    1000  12s    settings",
                "",
                "display 1: 60 Hz",
                "  profile: -",
                "  reason:  -",
                "  rule:    idle (step 6: no voting link)",
                "  held by: no link",
                "  cap:     Low Power Mode, 60 Hz",
                "  limited: no link",
                "  pending: 10 Hz in 0.250 s (at 5012.500)",
                "  caps:    low power on, limit frame rate off, thermal critical (at most 60 Hz:",
                "           Low Power Mode)",
                "  links:   none",
            ]
        )
        for line in lines { #expect(line.count <= 80, "\(line)") }
        #expect(StatusText.lines(for: CompositorState(displays: []), now: 0) == ["no displays"])
    }

    @Test("status: a link held back until its client answers a tick says which tick, since when, and what it cost")
    func statusShowsAwaitedFrames() throws {
        let state = try Fixture.state()
        #expect(!StatusText.lines(for: state.displays[0], now: 4940).contains { $0.contains("waiting for frames") })
        var display = state.displays[0]
        display.links[0].awaitingFrame = AwaitingFrameState(sequence: 17, since: 4938.75, skipped: 150)
        let lines = StatusText.lines(for: display, now: 4940)
        let heading = try #require(lines.firstIndex { $0.contains("waiting for frames") }, "\(lines)")
        // The words after the heading, as wrapping at 80 columns leaves them.
        let entry = lines[(heading + 1)...].joined(separator: " ").split(separator: " ").joined(separator: " ")
        #expect(entry.contains("link 3: tick 17, 1.250 s ago, is unanswered; 150 intervals passed without a tick"), "\(lines)")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines)")
    }

    @Test("status: lists beyond the decision's limit say how many more")
    func statusCounts() {
        let decision = DecisionState(
            rate: 120, rule: .preferred, deciders: [LinkID(rawValue: 1), LinkID(rawValue: 2)], deciderCount: 40, cap: nil,
            limited: [LinkLimit(link: LinkID(rawValue: 5), by: .cap, wanted: 120, got: 60)], limitedCount: 3, pending: nil, reason: ""
        )
        let lines = DecisionText.lines(for: decision, links: [], now: 0)
        #expect(lines.contains("  held by: link 1, link 2 and 38 more"))
        #expect(lines.contains("  limited: link 5 wants 120 Hz, gets 60 Hz (capped by a cap)"))
        #expect(lines.contains("           and 2 more"))
    }

    @Test(
        "status: ages",
        arguments: [(0.4, "0s"), (59.9, "59s"), (61, "1m01s"), (11_040, "3h04m"), (190_800, "2d05h"), (-3, "0s")] as [(Double, String)]
    )
    func ages(seconds: Double, text: String) {
        #expect(StatusText.age(seconds) == text)
    }

    @Test(
        "caps: each setting, then the cap in force and what imposes it",
        arguments: [
            (DisplayCaps(), "low power off, limit frame rate off, thermal nominal (no cap)"),
            (DisplayCaps(thermalState: .fair), "low power off, limit frame rate off, thermal fair (no cap)"),
            (DisplayCaps(lowPowerMode: true), "low power on, limit frame rate off, thermal nominal (at most 60 Hz: Low Power Mode)"),
            (DisplayCaps(limitFrameRate: true), "low power off, limit frame rate on, thermal nominal (at most 60 Hz: Limit Frame Rate)"),
            (
                DisplayCaps(limitFrameRate: true, thermalState: .serious),
                "low power off, limit frame rate on, thermal serious (at most 60 Hz: Limit Frame Rate)"
            ),
            (
                DisplayCaps(lowPowerMode: true, thermalState: .critical),
                "low power on, limit frame rate off, thermal critical (at most 60 Hz: Low Power Mode)"
            ),
        ] as [(DisplayCaps, String)]
    )
    func caps(caps: DisplayCaps, text: String) {
        #expect(CapsText.describe(caps) == text)
        #expect(CapsText.line(display: DisplayID(rawValue: 2), caps: caps) == "display 2: " + text)
    }

    @Test("watch: the opening lines give each display's rate, link count and reason")
    func watchStarted() throws {
        #expect(
            EventText.started(watch: 5, state: try Fixture.state()) == [
                "watch 5 started; press Ctrl-C to stop",
                "display 0: 120 Hz, 3 links (\(Fixture.reason))",
                "display 1: 60 Hz, 0 links",
            ]
        )
    }

    @Test("watch: one line per event kind, decoded from the wire params")
    func events() throws {
        let scroll = try LinkState(json: Fixture.scrollLink)
        let monitor = try LinkState(json: Fixture.monitorLink)
        let display = DisplayID(rawValue: 0)
        let cases: [(CompositorEvent, String)] = [
            (
                .refreshRateChanged(display: display, from: 60, to: 120, reason: "a link asks"),
                "6000.000000 display 0: refresh 60 Hz -> 120 Hz (a link asks)"
            ),
            (
                .refreshRateChanged(display: display, from: 120, to: 23.976, reason: ""),
                "6000.000000 display 0: refresh 120 Hz -> 23.976 Hz"
            ),
            (
                .refreshRateChanged(display: display, from: 60, to: 120, reason: "a link asks", decision: Fixture.decision, at: 5012.0166),
                "5012.016600 display 0: refresh 60 Hz -> 120 Hz; rule exact; held by link 3; cap none; 1 limited (a link asks)"
            ),
            (
                .refreshRateChanged(display: display, from: 60, to: 10, reason: "", decision: Fixture.cappedDecision, at: 5013),
                "5013.000000 display 0: refresh 60 Hz -> 10 Hz; rule idle; held by no link; cap Low Power Mode, 60 Hz"
            ),
            (
                .linkAdded(display: display, link: scroll),
                #"display 0: link 3 added: range (80, 120, 120) Hz, callback 120 Hz, high frame rate, label "scroll", pid 42 uid 1000 (game)"#
            ),
            (
                .linkUpdated(display: display, link: monitor),
                "display 0: link 12 updated: range (10, 60, 0) Hz, callback 60 Hz, paused, pid 4242 uid 0"
            ),
            (.linkRemoved(display: display, link: LinkID(rawValue: 3), reason: "connection closed"), "display 0: link 3 removed (connection closed)"),
            (.linkRemoved(display: display, link: LinkID(rawValue: 3), reason: ""), "display 0: link 3 removed"),
            (
                .capsChanged(display: DisplayID(rawValue: 1), caps: DisplayCaps(lowPowerMode: true)),
                "display 1: caps low power on, limit frame rate off, thermal nominal (at most 60 Hz: Low Power Mode)"
            ),
        ]
        for (event, text) in cases {
            let received = CompositorWatchEvent(watch: 5, params: event.params(watch: 5))
            #expect(received.event == event)
            #expect(EventText.line(for: received, receivedAt: 6000) == text)
        }
    }

    @Test("watch: an event this client cannot read is shown raw")
    func unknownEvents() {
        let newer: JSONValue = ["watch": 5, "kind": "displayAdded", "display": 2]
        #expect(EventText.line(for: CompositorWatchEvent(watch: 5, params: newer), receivedAt: 0) == #"event displayAdded: {"watch":5,"kind":"displayAdded","display":2}"#)
        let kindless: JSONValue = ["watch": 5]
        #expect(EventText.line(for: CompositorWatchEvent(watch: 5, params: kindless), receivedAt: 0) == #"event ?: {"watch":5}"#)
        let broken: JSONValue = ["watch": 5, "kind": "linkRemoved", "display": 0]
        #expect(EventText.line(for: CompositorWatchEvent(watch: 5, params: broken), receivedAt: 0) == #"event linkRemoved: {"watch":5,"kind":"linkRemoved","display":0}"#)
    }

    @Test("describe: services, methods with kind and stream, and a table of params")
    func catalog() {
        let catalog: JSONValue = [
            "services": [
                [
                    "name": "a.S",
                    "methods": [
                        [
                            "name": "M", "kind": "unary",
                            "params": [
                                ["name": "link", "type": "integer", "required": true],
                                ["name": "range.preferred", "type": "number (Hz, 0 = none)", "required": false],
                            ],
                        ],
                        ["name": "W", "kind": "server-streaming", "streams": "a.S/E", "params": [], "added": "in a newer daemon"],
                    ],
                ],
                ["name": "b.T", "methods": []],
            ]
        ]
        #expect(
            CatalogText.lines(for: catalog) == [
                "a.S",
                "  M (unary)",
                "    PARAM            TYPE                   REQUIRED",
                "    link             integer                yes",
                "    range.preferred  number (Hz, 0 = none)  no",
                "  W (server-streaming, streams a.S/E)",
                "    no params",
                "",
                "b.T",
            ]
        )
        #expect(CatalogText.lines(for: ["services": []]) == ["no services"])
        #expect(CatalogText.lines(for: [:]) == ["no services"])
    }

    @Test("describe: the daemon's own catalog shows every v1 method under its service")
    func realCatalog() {
        let lines = CatalogText.lines(for: ServiceCatalog.jsonValue)
        for service in ServiceCatalog.services { #expect(lines.contains(service)) }
        for method in V1Method.allCases {
            #expect(lines.contains { $0.hasPrefix("  \(method.method) (") }, "\(method.rawValue)")
        }
        #expect(lines.contains("  Register (server-streaming, streams framerate.v1.DisplayLink/Tick)"))
    }
}

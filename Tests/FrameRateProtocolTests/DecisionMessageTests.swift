import FrameRateModel
import FrameRateProtocol
import Testing

@Suite("The decision object on the wire")
struct DecisionMessageTests {
    /// A decision with every field set: a cap, a limited link and a pending change.
    static let capped = DecisionState(
        rate: 60, rule: .cap, deciders: [], cap: DecisionCap(source: .lowPower, hz: 60),
        limited: [LinkLimit(link: LinkID(rawValue: 1), by: .cap, wanted: 120, got: 60)], pending: DecisionPending(rate: 10, at: 1234.5),
        reason: "Low Power Mode caps the display at 60 Hz"
    )
    /// A decision without a cap or pending change, with more deciders than it lists.
    static let exact = DecisionState(
        rate: 120, rule: .exact, deciders: [LinkID(rawValue: 3)], deciderCount: 20, cap: nil,
        limited: [LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60)], limitedCount: 1, pending: nil,
        reason: "120 Hz is the lowest rate that serves every link exactly"
    )

    @Test("the exact text: the names of the issue, null cap and pending, times with nanosecond precision")
    func exactText() {
        #expect(
            Self.exact.jsonValue.jsonString
                == #"{"rate":120.0,"rule":"exact","deciders":[3],"deciderCount":20,"cap":null,"#
                + #""limited":[{"link":1,"by":"entitlement","wanted":120.0,"got":60.0}],"limitedCount":1,"pending":null,"#
                + #""reason":"120 Hz is the lowest rate that serves every link exactly"}"#
        )
        let text = Self.capped.jsonValue.jsonString
        #expect(text.contains(#""cap":{"source":"lowPower","hz":60.0}"#), "\(text)")
        #expect(text.contains(#""pending":{"rate":10.0,"at":1234.500000000}"#), "\(text)")
    }

    @Test("init(json:) inverts jsonValue, also through the wire text")
    func roundTrip() throws {
        for decision in [Self.capped, Self.exact] {
            #expect(try DecisionState(json: decision.jsonValue) == decision)
            #expect(try DecisionState(json: try JSONValue(parsing: decision.jsonValue.jsonString)) == decision)
        }
    }

    @Test("every rule, cap source and limit reason of the model has its documented wire name")
    func names() {
        #expect(ArbitrationRule.allCases.map(\.rawValue) == ["cap", "exact", "priority", "preferred", "most-served", "idle"])
        #expect(CapSource.allCases.map(\.rawValue) == ["lowPower", "limitFrameRate", "thermal", "maxRefreshRate"])
        #expect(LimitReason.allCases.map(\.rawValue) == ["entitlement", "cap", "overrun", "velocity"])
    }

    @Test(
        "a malformed decision names the field",
        arguments: [
            (["rate": 60, "rule": "loudest"] as JSONValue, "decision.rule"),
            (["rule": "exact"], "decision.rate"),
            (["rate": 60, "rule": "exact", "deciders": [0]], "decision.deciders"),
            (["rate": 60, "rule": "exact", "cap": ["source": "battery", "hz": 60]], "decision.cap.source"),
            (["rate": 60, "rule": "exact", "cap": ["source": "thermal"]], "decision.cap.hz"),
            (["rate": 60, "rule": "exact", "limited": [["link": 1, "by": "mood", "wanted": 120, "got": 60]]], "decision.limited.by"),
            (["rate": 60, "rule": "exact", "pending": ["rate": 10]], "decision.pending.at"),
            (["rate": 60, "rule": "exact", "deciders": .array(Array(repeating: 1, count: 257))], "decision.deciders"),
        ] as [(JSONValue, String)]
    )
    func malformed(_ json: JSONValue, field: String) {
        do throws(RPCError) {
            _ = try DecisionState(json: json)
            Issue.record("accepted \(json.jsonString)")
        } catch {
            #expect(error.code == RPCError.invalidParamsCode)
            #expect(error.data?["field"]?.stringValue == field, "\(error.message)")
        }
    }

    @Test("Register/Update result: decision, limitedBy, wanted and got; null when not limited")
    func linkStatusResult() throws {
        let limited = LinkStatusResult(
            link: LinkID(rawValue: 1), display: DisplayID(rawValue: 0), refreshRate: 120, callbackRate: 60, decision: Self.exact,
            limit: LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60)
        )
        let text = limited.jsonValue.jsonString
        #expect(text.contains(#""limitedBy":"entitlement","wanted":120.0,"got":60.0"#) || text.contains(#""limitedBy":"entitlement""#), "\(text)")
        #expect(limited.jsonValue["limitedBy"] == .string("entitlement"))
        #expect(limited.jsonValue["wanted"] == JSONValue(120.0))
        #expect(try LinkStatusResult(json: try JSONValue(parsing: text)) == limited)
        #expect(limited.limitedBy == .entitlement && limited.wanted == 120)

        let free = LinkStatusResult(
            link: LinkID(rawValue: 3), display: nil, refreshRate: 120, callbackRate: 120, decision: Self.exact, limit: nil
        )
        #expect(free.jsonValue["limitedBy"] == .null && free.jsonValue["wanted"] == .null && free.jsonValue["got"] == .null)
        #expect(try LinkStatusResult(json: free.jsonValue) == free)
        // A daemon older than the decision object still reads.
        let old = try LinkStatusResult(json: ["link": 3, "refreshRate": 60.0, "callbackRate": 60.0])
        #expect(old.decision == nil && old.limit == nil)
    }

    @Test("GetState: each display's decision, each link's since and limit")
    func displayState() throws {
        let json: JSONValue = [
            "id": 0, "profile": "promotion-phone", "supportedRates": [120.0, 60.0], "refreshRate": 120.0, "reason": "r",
            "caps": ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"],
            "links": [
                [
                    "link": 1, "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 0.0], "paused": false, "callbackRate": 60.0,
                    "label": nil, "highFrameRate": false, "pid": 7, "uid": 1000, "command": "app", "since": 100.25,
                    "limitedBy": "entitlement", "wanted": 120.0, "got": 60.0,
                ]
            ],
            "decision": Self.exact.jsonValue,
        ]
        let display = try DisplayState(json: json)
        #expect(display.decision == Self.exact)
        #expect(display.links[0].since == 100.25)
        #expect(display.links[0].limit == LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60))
        #expect(try DisplayState(json: try JSONValue(parsing: display.jsonValue.jsonString)) == display)
        #expect(display.jsonValue["links"]?[0]?["since"]?.numberValue?.text == "100.250000000")
    }

    @Test("the model's decision: every field carried, the pending time as CLOCK_MONOTONIC seconds from the start")
    func fromModel() throws {
        let start = MonotonicClock.Instant(seconds: 500)
        var model = Compositor<MonotonicClock>(displays: [DisplayConfiguration(id: DisplayID(rawValue: 0))], start: start)
        // An unentitled (80, 120, 0) link and an entitled (80, 120, 120) one: 120 Hz held by link 2, link 1 limited.
        _ = try model.register(
            owner: OwnerID(rawValue: 1), display: nil,
            configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 0)), at: start
        )
        let status = try model.register(
            owner: OwnerID(rawValue: 1), display: nil,
            configuration: DisplayLinkConfiguration(
                range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: true
            ),
            at: start
        )
        let decision = status.decision
        let wire = DecisionState(decision, start: model.start) { _ in true }
        #expect(wire.rate == 120 && wire.rule == .exact && wire.deciders == [LinkID(rawValue: 2)] && wire.deciderCount == 1)
        #expect(wire.cap == nil)
        #expect(wire.limited == [LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60)] && wire.limitedCount == 1)
        #expect(wire.reason == decision.reason)
        // The display starts at 60 Hz: the increase is due at the next vsync, 1/60 s after the start.
        let pending = try #require(wire.pending)
        #expect(pending.rate == 120)
        #expect(abs(pending.at - (500 + 1.0 / 60)) < 1e-6, "\(pending.at)")
    }
}

import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// Another user's link as the daemon shows it to an unprivileged viewer: pid, uid,
/// command and label `null`. framectl prints `-` there and never a made-up holder.
@Suite("framectl with a hidden holder")
struct HiddenHolderRenderingTests {
    static let hidden: JSONValue = [
        "link": 1, "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 120.0], "paused": false, "callbackRate": 120.0,
        "label": nil, "highFrameRate": true, "pid": nil, "uid": nil, "command": nil, "since": 100.0,
    ]

    @Test("the parsed link has no holder (not uid 0)")
    func parsed() throws {
        let link = try LinkState(json: Self.hidden)
        #expect(link.peer == nil && link.label == nil)
        // Written back as null, not as 0.
        #expect(link.jsonValue["pid"] == .null && link.jsonValue["uid"] == .null && link.jsonValue["label"] == .null)
        #expect(try LinkState(json: link.jsonValue) == link)
    }

    @Test("status: '-' for label, pid, uid and command; the decision names the link without a holder")
    func status() throws {
        let decision = DecisionState(
            rate: 120, rule: .exact, deciders: [LinkID(rawValue: 1)], cap: nil, limited: [], pending: nil,
            reason: "120 Hz is the lowest rate that serves every link exactly; link 1 (80, 120, 120) holds it there"
        )
        let display = try DisplayState(
            json: [
                "id": 0, "profile": "promotion-phone", "supportedRates": [120.0, 60.0], "refreshRate": 120.0,
                "reason": .string(decision.reason), "caps": ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"],
                "links": [Self.hidden], "decision": decision.jsonValue,
            ]
        )
        let lines = StatusText.lines(for: display, now: 105)
        let row = try #require(lines.first { $0.hasPrefix("    1 ") }).split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(row == ["1", "(80,", "120,", "120)", "hfr", "120", "Hz", "-", "-", "-", "5s", "-"], "\(lines)")
        #expect(lines.contains("  held by: link 1"), "\(lines)")
        // Why the dashes: said once, under the table.
        #expect(lines.suffix(2).joined(separator: " ").contains("another user's link"), "\(lines)")
        #expect(lines.allSatisfy { $0.count <= 80 }, "80 columns")
    }

    @Test("event: 'holder hidden' instead of pid and uid")
    func event() throws {
        let link = try LinkState(json: Self.hidden)
        #expect(EventText.describe(link) == "range (80, 120, 120) Hz, callback 120 Hz, high frame rate, holder hidden")
    }

    @Test("event: a link held back for an unanswered tick says which, and how many intervals went without a tick")
    func eventOfAHeldBackLink() throws {
        var link = try LinkState(json: Self.hidden)
        link.awaitingFrame = AwaitingFrameState(sequence: 17, since: 4938.75, skipped: 150)
        #expect(
            EventText.describe(link)
                == "range (80, 120, 120) Hz, callback 120 Hz, high frame rate, no ticks until tick 17 is answered (150 intervals without a tick), holder hidden"
        )
    }
}

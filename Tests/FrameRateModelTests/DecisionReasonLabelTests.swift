import FrameRateModel
import Testing

/// A decision's reason said again without some labels: a label is its holder's words,
/// and viewers who may not know the holder must not read it in the prose either.
@Suite("Decision reasons without labels")
struct DecisionReasonLabelTests {
    @Test("the decider's label goes when hidden; the sentence is otherwise the same")
    func deciderLabel() throws {
        var harness = Harness()
        let status = try harness.register(80, 120, 120, entitled: true, label: "secret-window")
        let decision = status.decision
        #expect(decision.namedLinks == [status.link])
        #expect(decision.reason(showingLabelOf: { _ in true }) == decision.reason)
        #expect(
            decision.reason(showingLabelOf: { _ in false })
                == "120 Hz is the lowest rate that serves every link exactly; link 1 (80, 120, 120) holds it there"
        )
    }

    @Test("the decider and the limited link: each label follows its own visibility")
    func twoLinks() throws {
        var harness = Harness()
        let limited = try harness.register(80, 120, 0, label: "menu")
        let decider = try harness.register(80, 120, 120, entitled: true, label: "scroll")
        let decision = decider.decision
        #expect(
            decision.reason
                == "120 Hz is the lowest rate that serves every link exactly; link 2 'scroll' (80, 120, 120) holds it there; "
                + "link 1 'menu' (80, 120, 0) is limited to 60 Hz without the high-frame-rate entitlement"
        )
        #expect(Set(decision.namedLinks) == [limited.link, decider.link])
        let withoutMenu = decision.reason { $0 != limited.link }
        #expect(withoutMenu.contains("link 2 'scroll' (80, 120, 120) holds it there"))
        #expect(withoutMenu.contains("; link 1 (80, 120, 0) is limited"))
        #expect(!withoutMenu.contains("menu"))
        let neither = decision.reason { _ in false }
        #expect(!neither.contains("menu") && !neither.contains("scroll"))
        // The display's reason (with the pending-change prefix) follows the same rule.
        let display = harness.compositor.snapshot[0]
        #expect(display.reason.hasPrefix("moving to 120 Hz at the next vsync: "))
        #expect(display.reason(showingLabelOf: { _ in false }) == "moving to 120 Hz at the next vsync: " + neither)
    }

    @Test("a cap's reason names the pulling link without its label when hidden")
    func capLabel() throws {
        var harness = Harness(caps: DisplayCaps(lowPowerMode: true))
        _ = try harness.register(80, 120, 120, entitled: true, label: "game")
        let decision = harness.compositor.snapshot[0].decision
        #expect(decision.rule == .cap)
        #expect(decision.reason.contains("link 1 'game' (80, 120, 120) wants 120 Hz"))
        #expect(decision.reason { _ in false }.contains("link 1 (80, 120, 120) wants 120 Hz"))
    }
}

import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

@Suite("framectl register: the stderr line about its link's limit")
struct LimitTextTests {
    static let link = LinkID(rawValue: 4)

    @Test("the entitlement and each cap, in the words of the issue")
    func lines() {
        #expect(
            LimitText.line(LinkLimit(link: Self.link, by: .entitlement, wanted: 120, got: 60), cap: nil)
                == "limited to 60 Hz: this link lacks the high-frame-rate entitlement (add --high-frame-rate)"
        )
        let capped = LinkLimit(link: Self.link, by: .cap, wanted: 120, got: 60)
        #expect(LimitText.line(capped, cap: DecisionCap(source: .lowPower, hz: 60)) == "limited to 60 Hz by Low Power Mode")
        #expect(LimitText.line(capped, cap: DecisionCap(source: .limitFrameRate, hz: 60)) == "limited to 60 Hz by Limit Frame Rate")
        #expect(LimitText.line(capped, cap: DecisionCap(source: .thermal, hz: 60)) == "limited to 60 Hz by the thermal state")
        #expect(
            LimitText.line(LinkLimit(link: Self.link, by: .cap, wanted: 120, got: 48), cap: DecisionCap(source: .maxRefreshRate, hz: 48))
                == "limited to 48 Hz by the daemon's --max-refresh-rate"
        )
        #expect(LimitText.line(nil, cap: nil) == "no longer limited: the link may have the rates it asked for")
    }

    @Test("the tracker prints once per change: nothing unlimited, again when the cap or limit changes, once when lifted")
    func tracker() {
        var tracker = LimitTracker()
        let lowPower = DecisionCap(source: .lowPower, hz: 60)
        let thermal = DecisionCap(source: .thermal, hz: 60)
        let capped = LinkLimit(link: Self.link, by: .cap, wanted: 120, got: 60)
        #expect(tracker.update(limit: nil, cap: nil) == nil)
        #expect(tracker.update(limit: capped, cap: lowPower) == "limited to 60 Hz by Low Power Mode")
        #expect(tracker.update(limit: capped, cap: lowPower) == nil)
        #expect(tracker.update(limit: capped, cap: thermal) == "limited to 60 Hz by the thermal state")
        #expect(tracker.update(limit: nil, cap: nil) == "no longer limited: the link may have the rates it asked for")
        #expect(tracker.update(limit: nil, cap: nil) == nil)
        // An entitlement limit does not change with the cap beside it.
        let entitlement = LinkLimit(link: Self.link, by: .entitlement, wanted: 120, got: 60)
        #expect(tracker.update(limit: entitlement, cap: nil) != nil)
        #expect(tracker.update(limit: entitlement, cap: lowPower) == nil)
    }
}

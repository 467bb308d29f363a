import FrameRateModel
import FrameRateProtocol

/// The line `framectl register` prints on stderr about its own link's limit.
enum LimitText {
    /// `limited to 60 Hz: this link lacks the high-frame-rate entitlement (add --high-frame-rate)`,
    /// `limited to 60 Hz by Low Power Mode`, or, once a limit is lifted,
    /// `no longer limited: the link may have the rates it asked for`.
    /// - Parameter cap: the display's cap in force, which names what a `cap` limit is.
    static func line(_ limit: LinkLimit?, cap: DecisionCap?) -> String {
        guard let limit else { return "no longer limited: the link may have the rates it asked for" }
        let got = FrameRateMath.format(limit.got)
        switch limit.by {
        case .entitlement:
            return "limited to \(got) Hz: this link lacks the high-frame-rate entitlement (add --high-frame-rate)"
        case .cap:
            return "limited to \(got) Hz by " + (cap.map { DecisionText.capName($0.source) } ?? "a cap")
        case .overrun:
            return "stepped down to \(got) Hz: this adaptive link's frames kept missing their deadline (it steps back up once they fit)"
        case .velocity:
            return "the panel runs at \(got) Hz for this link's content velocity; its callbacks keep their rate"
        }
    }
}

/// Follows one link's limit and says when it changes: the limit itself (what limits the
/// link and to what rate) or, for a cap, which cap.
struct LimitTracker {
    private var shown: (by: LimitReason, got: Double, cap: CapSource?)?

    /// Starts with nothing shown: a link that is not limited says nothing.
    init() {}

    /// The line to print when `limit` (under `cap`) differs from what was last shown, else `nil`.
    mutating func update(limit: LinkLimit?, cap: DecisionCap?) -> String? {
        let next = limit.map { (by: $0.by, got: $0.got, cap: $0.by == .cap ? cap?.source : nil) }
        switch (shown, next) {
        case (nil, nil): return nil
        case (let old?, let new?) where old.by == new.by && FrameRateMath.equal(old.got, new.got) && old.cap == new.cap:
            return nil
        default:
            shown = next
            return LimitText.line(limit, cap: cap)
        }
    }
}

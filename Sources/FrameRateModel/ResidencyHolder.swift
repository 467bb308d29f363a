/// What a share of a display's time at one rate is credited to.
public enum ResidencyHolder: Hashable, Sendable {
    /// A link that decided the rate (one of the decision's deciders).
    case link(LinkID)
    /// A cap decided the rate (Low Power Mode, Limit Frame Rate, thermal).
    case cap
    /// No link voted: the display held its rate through the idle timeout, or idled down.
    case idle
    /// Links voted, but none held the display up: the rate was the lowest candidate.
    case lowest
    /// Links that have ended, merged once more of them held the display than the
    /// ledger keeps by name (``ResidencyLedger/endedLimit``).
    case ended

    /// The wire's `reason` for a holder that is not a link; `nil` for a link.
    public var reason: String? {
        switch self {
        case .link: nil
        case .cap: "cap"
        case .idle: "idle"
        case .lowest: "lowest"
        case .ended: "ended"
        }
    }
}

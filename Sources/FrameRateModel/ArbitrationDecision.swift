/// Which step of the decision ladder in `docs/arbitration.md` chose a refresh rate.
public enum ArbitrationRule: String, Hashable, Sendable {
    /// Rule 2: the lowest candidate that serves every voting link exactly.
    case exact
    /// Rule 3: every voting link inside its range, smallest total relative distance.
    case closest
    /// Rule 4: the most links inside their range, then smallest distance.
    case mostServed
    /// Rule 5: no voting link; the display idles down to its lowest rate.
    case idle
    /// The caps exclude every supported rate: the lowest supported rate.
    case capBelowEveryRate
}

/// The outcome of one arbitration: the refresh rate a display should run at and why.
public struct ArbitrationDecision: Hashable, Sendable {
    /// The chosen refresh rate, in Hz: always one of the profile's supported rates.
    public let refreshRate: Double
    /// The ladder step that chose it.
    public let rule: ArbitrationRule
    /// A sentence for people naming the link or cap that decided it.
    public let reason: String
    /// The link whose needs set the rate, when one did.
    public let decidingLink: LinkID?
    /// The cap that clamped at least one link's range, if any.
    public let limitingCap: RefreshRateCap?
}

/// What one unpaused display link asks of arbitration: its range and whether
/// its client holds the high-frame-rate entitlement.
public struct LinkVote: Hashable, Sendable {
    /// The link, named in decision reasons.
    public let link: LinkID
    /// The link's frame-rate range, as registered (unclamped).
    public let range: FrameRateRange
    /// Whether the link's client declared the high-frame-rate entitlement.
    public let hasHighFrameRateEntitlement: Bool
    /// The link's label, if any, named in decision reasons.
    public let label: String?
    /// Whether `range` is a transient boost's (``LinkBoost``), named in decision reasons.
    public var isBoosted: Bool = false
    /// The content velocity (points/s) whose table rate `range` is, for a panel vote, named in reasons.
    public var contentVelocity: Double? = nil

    /// Builds a vote.
    public init(link: LinkID, range: FrameRateRange, hasHighFrameRateEntitlement: Bool, label: String? = nil) {
        self.link = link
        self.range = range
        self.hasHighFrameRateEntitlement = hasHighFrameRateEntitlement
        self.label = label
    }

    /// `link 3 'scroll' (80, 120, 120)`.
    var reasonName: String { reasonName(showingLabel: true) }

    /// `link 3 'scroll' (80, 120, 120)`, or `link 3 (80, 120, 120)` without the label
    /// (for a viewer who may not see who holds the link: the label is the holder's words);
    /// ` boosted` after it while a boost holds its vote.
    func reasonName(showingLabel: Bool) -> String {
        let name = showingLabel ? label.map { "\(link) '\($0)'" } ?? "\(link)" : "\(link)"
        return "\(name) \(range)" + (isBoosted ? " boosted" : "")
            + (contentVelocity.map { " at \(FrameRateMath.format($0)) pt/s" } ?? "")
    }
}

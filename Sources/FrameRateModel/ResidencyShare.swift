/// One holder's share of a display's time at one rate.
public struct ResidencyShare: Hashable, Sendable {
    /// Who held the rate.
    public let holder: ResidencyHolder
    /// For a link: its owner and label as they were when it held the rate.
    public let owner: OwnerID?
    /// For a link: its label.
    public let label: String?
    /// How long it held the rate.
    public let time: Duration

    /// Builds a share.
    public init(holder: ResidencyHolder, owner: OwnerID?, label: String?, time: Duration) {
        self.holder = holder
        self.owner = owner
        self.label = label
        self.time = time
    }
}

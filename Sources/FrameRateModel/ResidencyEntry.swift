/// A display's time at one refresh rate since it started, and who held it there.
public struct ResidencyEntry: Hashable, Sendable {
    /// The rate, in Hz.
    public let rate: Double
    /// Time at that rate: the sum of ``heldBy``'s times.
    public let time: Duration
    /// Who held it, largest share first.
    public let heldBy: [ResidencyShare]
}

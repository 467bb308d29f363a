/// A link that ticks again after a wait ``HeldBackLink`` reported: its client answered
/// the awaited tick, and the vsync that reports this delivered the link's next tick.
/// Reported once per reported wait, so that whoever was told why the link got no ticks
/// also hears that it gets them again.
public struct ResumedLink: Hashable, Sendable {
    /// The link.
    public let link: LinkID
    /// Its owner (the connection).
    public let owner: OwnerID
    /// The sequence of the tick whose frame it waited for (``HeldBackLink``'s
    /// `frame.sequence`).
    public let awaited: UInt64
    /// The sequence of the tick delivered now.
    public let sequence: UInt64
    /// How long the link went without a tick: from the awaited tick's timestamp to this
    /// vsync.
    public let waited: Duration
}

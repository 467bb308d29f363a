/// One display link at a handover: who holds it, what it asked for, when it was
/// registered and how far its pacing has got.
public struct LinkCheckpoint: Hashable, Sendable {
    /// The link's id, kept by the daemon that takes over.
    public var link: LinkID
    /// Its owner (in the daemon: its connection).
    public var owner: OwnerID
    /// Its range, paused flag, entitlement and label.
    public var configuration: DisplayLinkConfiguration
    /// When it was registered, as the time since the compositor's start.
    public var since: Duration
    /// Its sequence numbers and pending skips.
    public var pacing: LinkPacingCheckpoint

    /// Builds a link checkpoint.
    public init(link: LinkID, owner: OwnerID, configuration: DisplayLinkConfiguration, since: Duration, pacing: LinkPacingCheckpoint) {
        self.link = link
        self.owner = owner
        self.configuration = configuration
        self.since = since
        self.pacing = pacing
    }
}

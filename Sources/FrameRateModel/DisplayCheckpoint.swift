/// One display at a handover: its caps, the rate in force and the governor's timers, its
/// vsync grid and its links. The arbitration target is not stored: it follows from the
/// links and caps, and is computed again on restore.
///
/// Times are durations since the compositor's start (its displays' first vsync).
public struct DisplayCheckpoint: Hashable, Sendable {
    /// The display's id.
    public var id: DisplayID
    /// Its caps.
    public var caps: DisplayCaps
    /// The refresh rate in force, in Hz (the vsync grid's period is `1 / refreshRate`).
    public var refreshRate: Double
    /// Why the rate in force was chosen.
    public var reason: String
    /// The index of the vsync at which the current period started.
    public var anchorIndex: UInt64
    /// When that vsync was, since the start.
    public var anchorTime: Duration
    /// The index of the last vsync processed.
    public var lastIndex: UInt64
    /// Since when the display has had no voting link, if it has none.
    public var idleSince: Duration?
    /// Since when the display has wanted a rate below the one in force, if it does.
    public var decreaseWantedSince: Duration?
    /// Its links, in registration order.
    public var links: [LinkCheckpoint]

    /// Builds a display checkpoint.
    public init(
        id: DisplayID, caps: DisplayCaps, refreshRate: Double, reason: String, anchorIndex: UInt64, anchorTime: Duration,
        lastIndex: UInt64, idleSince: Duration?, decreaseWantedSince: Duration?, links: [LinkCheckpoint]
    ) {
        self.id = id
        self.caps = caps
        self.refreshRate = refreshRate
        self.reason = reason
        self.anchorIndex = anchorIndex
        self.anchorTime = anchorTime
        self.lastIndex = lastIndex
        self.idleSince = idleSince
        self.decreaseWantedSince = decreaseWantedSince
        self.links = links
    }
}

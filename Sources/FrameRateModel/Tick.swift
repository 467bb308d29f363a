/// One display-link callback: what a client's frame for this interval needs to know.
///
/// Instants are on the compositor's clock (in the daemon, `CLOCK_MONOTONIC`).
public struct Tick<Instant: InstantProtocol>: Hashable, Sendable where Instant.Duration == Duration {
    /// The link the tick is for.
    public let link: LinkID
    /// The link's owner (the daemon: the connection to write it to).
    public let owner: OwnerID
    /// The link's interval number: the previous delivered tick's plus `skipped + 1`.
    public let sequence: UInt64
    /// The vsync that starts this interval (`CADisplayLink.timestamp`).
    public let timestamp: Instant
    /// The deadline for the next frame, `timestamp + 1 / callbackRate`
    /// (`CADisplayLink.targetTimestamp`).
    public let targetTimestamp: Instant
    /// The display's (panel's) refresh period, `1 / refreshRate` (`CADisplayLink.duration`).
    public let duration: Duration
    /// The panel's refresh rate, in Hz: the display's grid rate, or lower while a link's
    /// content velocity lowers the panel (``ContentVelocityTable``).
    public let refreshRate: Double
    /// The link's callback rate on the display's grid, in Hz: `refreshRate / n`, except
    /// while content velocity lowers the panel, when it is `grid rate / n` and may exceed
    /// `refreshRate` (`timestamp` and `targetTimestamp` stay on the grid).
    public let callbackRate: Double
    /// How many of the link's intervals passed without a tick since its last one.
    public let skipped: UInt64
    /// Whether the link is boosted (``LinkBoost``) at this tick: it votes its boost's range.
    public var boosted: Bool = false
    /// The link's `preferredFrameLatency` (1 or 2) at this tick.
    public var frameLatency: Int = 1
    /// How many future frame timelines the link asked for (`timelines`, 1 to 7).
    public var timelineCount: Int = 1
    /// The link's next frames (``FrameSchedule``), for a link that asked for more than one
    /// timeline or for latency 2; `nil` otherwise (its one frame is ``targetTimestamp``).
    public var schedule: FrameSchedule? = nil
}

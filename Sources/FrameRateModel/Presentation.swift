/// What became of one presented frame (`framerate.v1.DisplayLink/Presented`): shown at a
/// vsync, or dropped because a newer frame of the same link replaced it first.
///
/// Instants are on the compositor's clock (in the daemon, `CLOCK_MONOTONIC`).
public struct Presentation<Instant: InstantProtocol>: Hashable, Sendable where Instant.Duration == Duration {
    /// The link whose frame it is.
    public let link: LinkID
    /// The link's owner (the daemon: the connection to tell).
    public let owner: OwnerID
    /// The tick whose frame this is.
    public let sequence: UInt64
    /// The vsync that showed the frame; `nil` when it was dropped.
    public let presentedTime: Instant?
    /// When the frame should have been shown: the tick's `targetTimestamp`.
    public let expectedTime: Instant
    /// How late the frame was shown, `max(0, presentedTime − expectedTime)`; zero when dropped.
    /// Lateness below ``HitchCounter/tolerance`` (grid rounding across a rate change) counts as zero.
    public let hitch: Duration

    /// Whether a newer frame replaced this one before a vsync showed it.
    public var dropped: Bool { presentedTime == nil }
}

/// A link's latest `contentVelocity` report (`DisplayLink/FrameDone` or `/Present`):
/// the speed of the fastest-moving content in its frame, and the panel rate its
/// display's ``ContentVelocityTable`` gives it.
///
/// Times are durations since the display's origin, like ``LinkBoost``'s.
public struct ContentVelocityReport: Hashable, Sendable {
    /// The reported speed, points per second (finite, `>= 0`).
    public let velocity: Double
    /// The panel rate the table gives it, in Hz (before the link's range and ceilings).
    public let rate: Double
    /// When the report expires (``ContentVelocityTable/reportLifetime`` after it was
    /// made), as the time since the display's origin.
    public let expires: Duration
}

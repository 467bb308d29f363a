public import FrameRateModel

/// What a reconnecting ``FrameRateConnection`` reports about its link to the daemon, for
/// tools that tell their user (framectl prints one line on stderr for each).
public enum ConnectionChange: Sendable, Hashable {
    /// The connection dropped (the daemon stopped or crashed); it is reconnecting.
    case lost
    /// Connected again after `outage` (from the drop to the last re-registration's reply);
    /// `links` (this client's ids, unchanged) were registered again, and `watches` watches.
    case restored(outage: Duration, links: [LinkID], watches: Int)
}

/// When to ping the systemd watchdog: at half its interval, from the vsync loop
/// itself, so a stalled loop stops pinging and systemd restarts the daemon.
///
/// A pure state machine over clock `C`'s instants: call ``vsync(at:)`` on every
/// processed vsync and send `WATCHDOG=1` when it returns `true`.
public struct WatchdogSchedule<C: Clock>: Sendable where C.Duration == Duration {
    /// Time between pings: half the watchdog interval.
    public let pingInterval: Duration
    private var lastPing: C.Instant?

    /// A schedule for a watchdog expecting pings within `interval`.
    public init(interval: Duration) {
        pingInterval = interval / 2
    }

    /// A vsync was processed at `now`: whether to ping now.
    public mutating func vsync(at now: C.Instant) -> Bool {
        if let lastPing, lastPing.duration(to: now) < pingInterval { return false }
        lastPing = now
        return true
    }
}

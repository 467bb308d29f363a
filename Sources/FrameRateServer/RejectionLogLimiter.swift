import FrameRateProtocol

/// Caps how many lines of one kind one source can put in the log: at most ``burst`` lines
/// per ``window``. Lines beyond that are counted, not logged, and the first line logged
/// once a new window starts says how many were suppressed. ``UserRejectionLogs`` keeps one
/// per user (rejected requests, refused and closed connections, pacing); the tick plane's
/// late vsyncs have one of their own.
///
/// Pure and clock-free: the caller passes the time of each rejection (a stepped clock in
/// tests, ``MonotonicClock`` in the server). Windows are fixed, starting at the first
/// rejection after the previous window ended, so a source repeating itself without pause
/// logs at most `burst` lines (plus their suppression counts) every `window`.
struct RejectionLogLimiter<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The default ``burst``: 10 lines.
    static var defaultBurst: Int { 10 }
    /// The default ``window``: 10 seconds.
    static var defaultWindow: Duration { .seconds(10) }

    /// What to do with one rejection.
    enum Decision: Equatable {
        /// Log it; `suppressed` rejections were left out before it (0 when none).
        case log(suppressed: Int)
        /// Leave it out of the log (it is counted).
        case suppress
    }

    /// The most lines logged per window.
    let burst: Int
    /// The length of a window.
    let window: Duration
    /// When the current window started; `nil` before the first rejection.
    private var windowStart: Instant?
    /// Lines logged in the current window.
    private var loggedInWindow = 0
    /// Rejections suppressed since the last line logged.
    private(set) var suppressed = 0

    /// A limiter allowing `burst` lines (`>= 1`) per `window` (`> 0`).
    init(burst: Int = defaultBurst, window: Duration = defaultWindow) {
        precondition(burst >= 1 && window > .zero, "burst must be at least 1 and window positive")
        self.burst = burst
        self.window = window
    }

    /// Records a rejection at `now` and says whether to log it.
    mutating func admit(at now: Instant) -> Decision {
        if let start = windowStart, start.duration(to: now) < window {
            guard loggedInWindow < burst else {
                suppressed += 1
                return .suppress
            }
        } else {
            windowStart = now
            loggedInWindow = 0
        }
        loggedInWindow += 1
        defer { suppressed = 0 }
        return .log(suppressed: suppressed)
    }

    /// Whether nothing is counted at `now`: no window running, nothing suppressed (a limiter
    /// that can be dropped and started over without losing anything).
    func isIdle(at now: Instant) -> Bool {
        guard suppressed == 0 else { return false }
        guard let start = windowStart else { return true }
        return start.duration(to: now) >= window
    }
}


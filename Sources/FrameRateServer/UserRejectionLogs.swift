/// One ``RejectionLogLimiter`` per user, for log lines a user could otherwise repeat by
/// opening connection after connection: requests rejected, connections refused at the
/// limit, links registered and released, adaptive steps, traces started, and the
/// rejections that end a connection (a line longer than the limit, a line
/// that did not complete in time; the partial-line attack's 200 connections per wave
/// logged 200 warnings a wave). A per-connection limit does nothing against a user who
/// opens a new connection for every line. At most ``RejectionLogLimiter/burst`` lines per
/// user per window; the next one logged says how many were left out.
///
/// Bounded: at most ``capacity`` users are tracked. A new user past that takes the place
/// of one whose window has ended (its count is empty), else of any one (which starts over).
/// Pure and clock-free, like the limiter: the caller passes the time.
struct UserRejectionLogs<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The most users tracked at once.
    let capacity: Int
    private var byUser: [UInt32: RejectionLogLimiter<Instant>] = [:]

    /// Each user's limit: at most `burst` lines per `window`.
    private let burst: Int
    private let window: Duration

    init(capacity: Int = 1024, burst: Int = RejectionLogLimiter<Instant>.defaultBurst, window: Duration = RejectionLogLimiter<Instant>.defaultWindow) {
        self.capacity = max(1, capacity)
        self.burst = burst
        self.window = window
    }

    /// Users tracked now.
    var count: Int { byUser.count }

    /// Records a connection-ending rejection of `uid`'s at `now` and says whether to log it.
    mutating func admit(uid: UInt32, at now: Instant) -> RejectionLogLimiter<Instant>.Decision {
        if byUser[uid] == nil, byUser.count >= capacity {
            let victim = byUser.first { $0.value.isIdle(at: now) }?.key ?? byUser.keys.first
            if let victim { byUser[victim] = nil }
        }
        return byUser[uid, default: RejectionLogLimiter(burst: burst, window: window)].admit(at: now)
    }

    /// What a limiter counts, named in the note of the next line logged.
    enum Kind: Sendable {
        /// Connections closed for a line too long or too slow.
        case closedConnection
        /// Connections refused (the connection limit, or stopping).
        case refusedConnection
        /// Error replies.
        case rejectedRequest
        /// Links held back waiting for their client's frame.
        case heldBackLink
        /// Links registered or released.
        case linkLifecycle
        /// Adaptive links stepped down or back up.
        case adaptiveStep
        /// Traces started.
        case traceStarted
    }

    /// The note a logged line carries after suppressed ones of `uid`: `""` or, for
    /// example, ` (12 more connections of uid 1000 closed the same way were not logged)`.
    static func note(suppressed: Int, uid: UInt32, kind: Kind = .closedConnection) -> String {
        guard suppressed > 0 else { return "" }
        let (one, many) =
            switch kind {
            case .closedConnection: ("connection of uid \(uid) closed the same way", "connections of uid \(uid) closed the same way")
            case .refusedConnection: ("refused connection of uid \(uid)", "refused connections of uid \(uid)")
            case .rejectedRequest: ("rejected request of uid \(uid)", "rejected requests of uid \(uid)")
            case .heldBackLink: ("held-back link of uid \(uid)", "held-back links of uid \(uid)")
            case .linkLifecycle: ("link registration or release of uid \(uid)", "link registrations and releases of uid \(uid)")
            case .adaptiveStep: ("adaptive step of uid \(uid)", "adaptive steps of uid \(uid)")
            case .traceStarted: ("trace started by uid \(uid)", "traces started by uid \(uid)")
            }
        return suppressed == 1 ? " (1 more \(one) was not logged)" : " (\(suppressed) more \(many) were not logged)"
    }
}

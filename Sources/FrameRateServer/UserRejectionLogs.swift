/// One ``RejectionLogLimiter`` per user for the rejections that end a connection (a line
/// longer than the limit, a line that did not complete in time): each connection can be
/// rejected that way only once, so a per-connection limit does nothing against a user who
/// opens connection after connection (the partial-line attack's 200 per wave logged 200
/// warnings a wave). At most ``RejectionLogLimiter/burst`` such lines per user per window;
/// the next one logged says how many were left out.
///
/// Bounded: at most ``capacity`` users are tracked. A new user past that takes the place
/// of one whose window has ended (its count is empty), else of any one (which starts over).
/// Pure and clock-free, like the limiter: the caller passes the time.
struct UserRejectionLogs<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The most users tracked at once.
    let capacity: Int
    private var byUser: [UInt32: RejectionLogLimiter<Instant>] = [:]

    init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// Users tracked now.
    var count: Int { byUser.count }

    /// Records a connection-ending rejection of `uid`'s at `now` and says whether to log it.
    mutating func admit(uid: UInt32, at now: Instant) -> RejectionLogLimiter<Instant>.Decision {
        if byUser[uid] == nil, byUser.count >= capacity {
            let victim = byUser.first { $0.value.isIdle(at: now) }?.key ?? byUser.keys.first
            if let victim { byUser[victim] = nil }
        }
        return byUser[uid, default: RejectionLogLimiter()].admit(at: now)
    }

    /// The note a logged line carries after suppressed ones of `uid`: `""` or
    /// ` (12 more connections of uid 1000 closed the same way were not logged)`.
    static func note(suppressed: Int, uid: UInt32) -> String {
        switch suppressed {
        case 0: ""
        case 1: " (1 more connection of uid \(uid) closed the same way was not logged)"
        default: " (\(suppressed) more connections of uid \(uid) closed the same way were not logged)"
        }
    }
}

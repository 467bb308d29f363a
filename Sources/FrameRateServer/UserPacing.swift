import FrameRateProtocol

/// How much of the control loop each unprivileged user may take, across all its
/// connections: a share of the loop's time and a rate of reply bytes. A user past either
/// waits before its next request is handled; it is never refused, only slowed.
///
/// Each resource is a generic cell rate algorithm (GCRA, the leaky-bucket form that
/// needs one instant per user): ``Due`` keeps the instant by which everything charged so
/// far would be paid off at the sustained rate. A request is handled while that instant
/// is at most one burst ahead of now, and charged afterwards by what it really cost. So
/// one request larger than the burst (a `GetState` of 10,000 links) still goes through,
/// and its user then waits until the debt is paid.
///
/// Why both: a `GetState` served from the encoding cache costs the loop about 0.1 ms but
/// sends 338 KB (1,000 links), which the kernel copies twice more and the tick-plane leader
/// flushes; one re-encoded after a change costs 4.4 ms and sends the same. A flood of
/// either kept both cores busy, and other users' calls waited for the scheduler
/// (`docs/performance.md`, attacks).
///
/// A pure state machine: every call takes `now` (``MonotonicClock``, `CLOCK_MONOTONIC`,
/// the daemon's wall clock even on a virtual-clock daemon). Confined to the control loop.
struct UserPacing {
    /// When one user's charges would be paid off at each sustained rate.
    struct Due: Hashable {
        var loop: MonotonicClock.Instant
        var bytes: MonotonicClock.Instant
    }

    let limits: UserPacingLimits
    /// How far ahead of now a user's due instants may be while it is still served: the
    /// wall time that pays for one burst.
    private let loopTolerance: Duration
    private let bytesTolerance: Duration
    /// Users with charges not yet paid off (a user absent here owes nothing).
    private var dues: [UInt32: Due] = [:]
    /// The size past which paid-off users are swept out (amortized: twice what stayed).
    private var sweepAt = 64

    /// The longest one charge may count (a request held up longer, by a stopped process
    /// or a debugger, is charged this much).
    static let longestCharge = Duration.seconds(60)

    init(limits: UserPacingLimits = UserPacingLimits()) {
        self.limits = limits
        self.loopTolerance = Self.cost(ofLoopTime: limits.loopBurst, limits: limits)
        self.bytesTolerance = Self.cost(ofReplyBytes: limits.replyBurstBytes, limits: limits)
    }

    /// When `uid` may have its next request handled, or `nil` to handle it now.
    func resumption(of uid: UInt32, at now: MonotonicClock.Instant) -> MonotonicClock.Instant? {
        guard let due = dues[uid] else { return nil }
        let ready = max(due.loop.advanced(by: .zero - loopTolerance), due.bytes.advanced(by: .zero - bytesTolerance))
        return ready > now ? ready : nil
    }

    /// Charges `uid` for one request that took `loopTime` of the control loop and
    /// produced `replyBytes` of reply, handled at `now`.
    mutating func charge(_ uid: UInt32, loopTime: Duration, replyBytes: Int, at now: MonotonicClock.Instant) {
        let due = dues[uid] ?? Due(loop: now, bytes: now)
        dues[uid] = Due(
            loop: max(due.loop, now).advanced(by: Self.cost(ofLoopTime: loopTime, limits: limits)),
            bytes: max(due.bytes, now).advanced(by: Self.cost(ofReplyBytes: replyBytes, limits: limits))
        )
        if dues.count > sweepAt {
            dues = dues.filter { $0.value.loop > now || $0.value.bytes > now }
            sweepAt = max(64, 2 * dues.count)
        }
    }

    /// How many users owe something (or did at the last sweep).
    var trackedUsers: Int { dues.count }

    /// Wall time that pays for `loopTime` of the loop: `loopTime / loopShare`.
    private static func cost(ofLoopTime loopTime: Duration, limits: UserPacingLimits) -> Duration {
        let nanoseconds = WireTime.nanoseconds(of: min(max(loopTime, .zero), Self.longestCharge))
        // At most 60 s / 0.001 = 6e13 ns: well inside Int64.
        return .nanoseconds(Int64((Double(nanoseconds) / limits.loopShare).rounded(.up)))
    }

    /// Wall time that pays for `bytes` of reply: `bytes / replyBytesPerSecond`.
    private static func cost(ofReplyBytes bytes: Int, limits: UserPacingLimits) -> Duration {
        let nanoseconds = (Double(max(0, bytes)) * 1e9 / Double(max(1, limits.replyBytesPerSecond))).rounded(.up)
        return min(.nanoseconds(Int64(min(nanoseconds, 1e18))), longestCharge)
    }
}

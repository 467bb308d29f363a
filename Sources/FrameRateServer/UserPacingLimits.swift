/// The per-user pacing of the control loop (``UserPacing``): the share of the loop's time
/// and the rate of reply bytes one unprivileged user may take, with their bursts.
/// `framerated --max-loop-share-per-user` and `--max-reply-rate-per-user` set the rates.
public struct UserPacingLimits: Hashable, Sendable {
    /// The share of the control loop's time one user may take, in ``shares``. Default 0.1.
    public var loopShare: Double
    /// Loop time one user may take at once after a quiet spell. Default 50 ms.
    public var loopBurst: Duration
    /// Reply bytes per second one user may be sent (at least 1). Default 64 MiB/s.
    public var replyBytesPerSecond: Int
    /// Reply bytes one user may be sent at once after a quiet spell. Default 8 MiB.
    public var replyBurstBytes: Int

    /// Builds limits; see each property for its default.
    public init(
        loopShare: Double = 0.1, loopBurst: Duration = .milliseconds(50), replyBytesPerSecond: Int = 64 << 20,
        replyBurstBytes: Int = 8 << 20
    ) {
        self.loopShare = loopShare
        self.loopBurst = loopBurst
        self.replyBytesPerSecond = replyBytesPerSecond
        self.replyBurstBytes = replyBurstBytes
    }

    /// The accepted shares: at most the whole loop, and not so small that one charge
    /// (at most ``UserPacing/longestCharge`` of loop time, divided by the share) overflows.
    public static let shares: ClosedRange<Double> = 0.001...1
}

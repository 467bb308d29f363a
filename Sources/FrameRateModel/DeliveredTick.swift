/// What a `Present` needs of one delivered tick.
struct DeliveredTick: Sendable {
    let sequence: UInt64
    /// When its frame is expected (`targetPresentationTimestamp`), since the display's origin.
    let target: Duration
    /// Its next frames, for a `Present` that aims at one by `vsyncId`.
    let schedule: FrameSchedule?
    /// The link's frame latency at the tick.
    let latency: Int
}

/// One future frame a tick offers (`timelines` entry; Android's `FrameTimeline`, one of
/// Chromium's possible deadlines): commit by ``deadline`` and the frame shows at
/// ``presentationTime``, the vsync ``vsyncID``.
///
/// Instants are on the compositor's clock (in the daemon, `CLOCK_MONOTONIC`).
public struct FrameTimeline<Instant: InstantProtocol>: Hashable, Sendable where Instant.Duration == Duration {
    /// The display's vsync index of ``presentationTime`` (``FrameSchedule``): what `Present`'s
    /// `vsyncId` names to aim at this frame.
    public let vsyncID: UInt64
    /// The commit deadline: the vsync that starts this frame's interval.
    public let deadline: Instant
    /// The vsync where a frame committed by ``deadline`` is shown: ``deadline`` plus
    /// `frameLatency - 1` of the link's intervals.
    public let presentationTime: Instant
}

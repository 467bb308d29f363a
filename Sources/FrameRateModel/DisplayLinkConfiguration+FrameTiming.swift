extension DisplayLinkConfiguration {
    /// The accepted `timelines`: 1 to 7 future frames per tick (``FrameSchedule/maximumFrames``).
    public static let timelineRange = 1...FrameSchedule.maximumFrames
    /// The accepted `preferredFrameLatency`: 1 or 2 intervals.
    public static let frameLatencyRange = 1...2

    /// Whether ticks of this link need its ``FrameSchedule`` with a decided rate change
    /// applied: it asked for more than one timeline or for a latency of 2.
    var needsFrameSchedule: Bool { timelines > 1 || frameLatency > 1 }
}

/// What a client states about one display link: the `CADisplayLink` properties
/// that steer arbitration.
public struct DisplayLinkConfiguration: Hashable, Sendable {
    /// The link's frame-rate range.
    public var range: FrameRateRange
    /// A paused link does not vote and gets no ticks (`CADisplayLink.isPaused`).
    public var isPaused: Bool
    /// Whether the client declared the high-frame-rate entitlement
    /// (the `CADisableMinimumFrameDurationOnPhone` analog).
    public var hasHighFrameRateEntitlement: Bool
    /// An optional name for people, shown in status and reasons.
    public var label: String?
    /// Whether the link steps down to a lower, even rate while its frames keep missing
    /// their deadline, and back up once they fit (`adaptive: true`; ``OverrunMonitor``).
    public var isAdaptive: Bool = false
    /// How many future frame timelines each tick lists (`timelines`, ``timelineRange``).
    public var timelines: Int = 1
    /// In how many intervals a frame started at a tick is shown (`preferredFrameLatency`,
    /// ``frameLatencyRange``; `CAMetalDisplayLink.preferredFrameLatency`).
    public var frameLatency: Int = 1

    /// Builds a configuration; links start unpaused and without the entitlement.
    public init(range: FrameRateRange, isPaused: Bool = false, hasHighFrameRateEntitlement: Bool = false, label: String? = nil) {
        self.range = range
        self.isPaused = isPaused
        self.hasHighFrameRateEntitlement = hasHighFrameRateEntitlement
        self.label = label
    }

    /// Builds a configuration that may be adaptive (``isAdaptive``).
    public init(
        range: FrameRateRange, isPaused: Bool = false, hasHighFrameRateEntitlement: Bool = false, label: String? = nil, isAdaptive: Bool
    ) {
        self.init(range: range, isPaused: isPaused, hasHighFrameRateEntitlement: hasHighFrameRateEntitlement, label: label)
        self.isAdaptive = isAdaptive
    }
}

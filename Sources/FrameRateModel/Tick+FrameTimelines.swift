extension Tick {
    /// The vsync where a frame started at this tick and finished by ``targetTimestamp`` is
    /// shown (`CAMetalDisplayLink.Update.targetPresentationTimestamp`):
    /// `timestamp + frameLatency / callbackRate`, the ``frameLatency``-th frame of the
    /// link's ``schedule`` (so a decided rate change before it moves it to where the frame
    /// will show). With latency 1 it is ``targetTimestamp``.
    public var targetPresentationTimestamp: Instant {
        guard let schedule, frameLatency > 1 else { return targetTimestamp }
        return instant(of: schedule.frames(frameLatency)[frameLatency - 1])
    }

    /// The tick's frame timelines as sent at `sentAt`: ``FrameTimelines/entries(schedule:count:latency:sentAt:)``
    /// in the compositor's instants. Empty for a link without a ``schedule``.
    public func timelines(sentAt: Instant) -> [FrameTimeline<Instant>] {
        guard let schedule else { return [] }
        return FrameTimelines.entries(
            schedule: schedule, count: timelineCount, latency: frameLatency, sentAt: schedule.tick.time + timestamp.duration(to: sentAt)
        ).map { FrameTimeline(vsyncID: $0.presentation.vsyncID, deadline: instant(of: $0.deadline), presentationTime: instant(of: $0.presentation)) }
    }

    /// The instant of a frame of ``schedule`` (whose times are since the display's origin,
    /// ``FrameSchedule/tick`` being this tick's ``timestamp``).
    private func instant(of frame: FrameSchedule.Frame) -> Instant {
        timestamp.advanced(by: frame.time - (schedule?.tick.time ?? .zero))
    }
}

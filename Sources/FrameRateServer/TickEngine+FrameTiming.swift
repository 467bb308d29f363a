import FrameRateModel
import FrameRateProtocol

extension TickEngine {
    /// What the ticks of one segment of a vsync share: their target (the cadence), their
    /// boosted flag and their frame timing.
    struct SegmentKey: Hashable {
        let target: MonotonicClock.Instant
        let boosted: Bool
        let timing: FrameTimingKey?
    }

    /// What besides the cadence and boosted flag makes a tick's shared fields differ: the
    /// frame latency, timeline count and schedule of a link that asked for latency 2 or
    /// more than one timeline; `nil` for every other link (their one segment per cadence).
    struct FrameTimingKey: Hashable {
        let latency: Int
        let count: Int
        let schedule: FrameSchedule

        /// The key of `tick`, or `nil` when its link asked for neither.
        init?(_ tick: Tick<MonotonicClock.Instant>) {
            guard let schedule = tick.schedule else { return nil }
            self.latency = tick.frameLatency
            self.count = tick.timelineCount
            self.schedule = schedule
        }
    }

    /// `tick`'s `timelines` as sent at `sentAt`; none (the field is left out) for a link
    /// with one timeline, whose one entry would repeat `targetTimestamp` and `targetPresentationTimestamp`.
    static func encodedTimelines(of tick: Tick<MonotonicClock.Instant>, sentAt: MonotonicClock.Instant) -> [TickLineEncoder.EncodedTimeline] {
        guard tick.timelineCount > 1 else { return [] }
        return tick.timelines(sentAt: sentAt).map {
            TickLineEncoder.EncodedTimeline(vsyncId: $0.vsyncID, deadline: $0.deadline.nanoseconds, presentationTime: $0.presentationTime.nanoseconds)
        }
    }
}

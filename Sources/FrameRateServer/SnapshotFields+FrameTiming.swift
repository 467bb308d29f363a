import FrameRateModel
import FrameRateProtocol

extension SnapshotFields {
    /// `configuration` with this link object's `timelines` and `preferredFrameLatency`;
    /// a snapshot from a daemon older than them has neither, which means 1 and 1.
    /// - Throws: ``HandoverSnapshotError/malformed(field:)`` for a value outside its range.
    func withFrameTiming(_ configuration: DisplayLinkConfiguration) throws(HandoverSnapshotError) -> DisplayLinkConfiguration {
        var configuration = configuration
        if value["timelines"] != nil {
            let timelines = try int64("timelines")
            guard let count = Int(exactly: timelines), DisplayLinkConfiguration.timelineRange.contains(count) else {
                throw .malformed(field: path("timelines"))
            }
            configuration.timelines = count
        }
        if value["preferredFrameLatency"] != nil {
            let latency = try int64("preferredFrameLatency")
            guard let frames = Int(exactly: latency), DisplayLinkConfiguration.frameLatencyRange.contains(frames) else {
                throw .malformed(field: path("preferredFrameLatency"))
            }
            configuration.frameLatency = frames
        }
        return configuration
    }
}

extension SnapshotFields {
    /// `pacing` with this link object's `lastDeliveredTime`, `lastDeliveredInterval` and
    /// `heldBackReported`; a snapshot from a daemon older than them has none, which leaves
    /// the times unknown (``LinkPacer`` then measures a wait from the latest interval's end) and
    /// the wait not yet reported.
    /// - Throws: ``HandoverSnapshotError/malformed(field:)`` for an ill-typed value.
    func withDeliveryTimes(_ pacing: LinkPacingCheckpoint) throws(HandoverSnapshotError) -> LinkPacingCheckpoint {
        var pacing = pacing
        if value["lastDeliveredTime"] != nil { pacing.lastDeliveredTime = try optionalDuration("lastDeliveredTime") }
        if value["lastDeliveredInterval"] != nil { pacing.lastDeliveredInterval = try optionalDuration("lastDeliveredInterval") }
        if value["heldBackReported"] != nil { pacing.heldBackReported = try bool("heldBackReported") }
        return pacing
    }
}

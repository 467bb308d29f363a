/// The rule that turns a tick's ``FrameSchedule`` into the `timelines` it carries.
public enum FrameTimelines {
    /// One entry in schedule times: the frame whose vsync is its deadline, and the frame
    /// (`latency - 1` intervals later) where it is shown.
    public struct Entry: Hashable, Sendable {
        /// The deadline's frame.
        public let deadline: FrameSchedule.Frame
        /// The presentation's frame; its vsync id is the entry's.
        public let presentation: FrameSchedule.Frame
    }

    /// The entries of a tick sent at `sentAt` (since the display's origin): frames `0..<count`
    /// (`count` clamped to `1...FrameSchedule.maximumFrames`), each shown `latency - 1`
    /// intervals after its deadline, earliest first, leaving out every entry whose deadline
    /// is before `sentAt`. Never empty: when all of them passed, the one entry is the first
    /// later frame (up to the ``FrameSchedule/maximumFrames``-th) whose deadline is not
    /// past, or that last frame if even its deadline passed.
    public static func entries(schedule: FrameSchedule, count: Int, latency: Int, sentAt: Duration) -> [Entry] {
        let count = Swift.min(Swift.max(count, 1), FrameSchedule.maximumFrames)
        let latency = Swift.max(latency, 1)
        let frames = schedule.frames(FrameSchedule.maximumFrames + latency - 1)
        let entries = (0..<FrameSchedule.maximumFrames).map { Entry(deadline: frames[$0], presentation: frames[$0 + latency - 1]) }
        let offered = entries[0..<count].filter { $0.deadline.time >= sentAt }
        if !offered.isEmpty { return offered }
        return [entries[count...].first { $0.deadline.time >= sentAt } ?? entries[entries.count - 1]]
    }

    /// The presentation frame of the entry whose vsync id is `vsyncID` among a tick's
    /// possible entries (frames `0..<FrameSchedule.maximumFrames` at `latency`), or `nil`:
    /// what a `Present` with `vsyncId` aims at.
    public static func presentation(of vsyncID: UInt64, schedule: FrameSchedule, latency: Int) -> FrameSchedule.Frame? {
        let latency = Swift.max(latency, 1)
        let frames = schedule.frames(FrameSchedule.maximumFrames + latency - 1)
        return frames[(latency - 1)...].first { $0.vsyncID == vsyncID }
    }
}

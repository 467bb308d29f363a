import NIOCore

extension TickLineEncoder {
    /// One `timelines` entry as the tick line writes it: the vsync id and whole nanoseconds
    /// on `CLOCK_MONOTONIC`.
    public struct EncodedTimeline: Hashable, Sendable {
        /// The entry's `vsyncId`.
        public let vsyncId: UInt64
        /// The entry's `deadline`, nanoseconds.
        public let deadline: Int64
        /// The entry's `presentationTime`, nanoseconds.
        public let presentationTime: Int64

        /// Builds an entry.
        public init(vsyncId: UInt64, deadline: Int64, presentationTime: Int64) {
            self.vsyncId = vsyncId
            self.deadline = deadline
            self.presentationTime = presentationTime
        }
    }

    /// Writes `,"timelines":[{"vsyncId":…,"deadline":…,"presentationTime":…},…]`, or nothing
    /// for no entries (a link with one timeline does not pay for the array), to `out` at
    /// `at`, which must have ``timelinesBytes(_:)`` of room; returns the offset after it.
    static func writeTimelines(_ timelines: [EncodedTimeline], to out: UnsafeMutableRawBufferPointer, at start: Int) -> Int {
        guard !timelines.isEmpty else { return start }
        precondition(start >= 0 && out.count - start >= timelinesBytes(timelines.count), "no room for the timelines")
        var at = copy(timelinesKey, to: out, at: start)
        for (index, entry) in timelines.enumerated() {
            at = copy(index == 0 ? firstVsyncIdKey : vsyncIdKey, to: out, at: at)
            at = DecimalText.write(entry.vsyncId, to: out, at: at)
            at = copy(deadlineKey, to: out, at: at)
            at = WireTime.write(nanoseconds: entry.deadline, to: out, at: at)
            at = copy(presentationTimeKey, to: out, at: at)
            at = WireTime.write(nanoseconds: entry.presentationTime, to: out, at: at)
            at = copy("}", to: out, at: at)
        }
        return copy("]", to: out, at: at)
    }

    /// The most bytes ``writeTimelines(_:to:at:)`` writes for `count` entries.
    static func timelinesBytes(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        let entry = vsyncIdKey.utf8CodeUnitCount + 20 + deadlineKey.utf8CodeUnitCount + presentationTimeKey.utf8CodeUnitCount + 2 * WireTime.maximumBytes + 1
        return timelinesKey.utf8CodeUnitCount + count * entry + 1
    }

    private static let timelinesKey: StaticString = #","timelines":["#
    private static let firstVsyncIdKey: StaticString = #"{"vsyncId":"#
    private static let vsyncIdKey: StaticString = #",{"vsyncId":"#
    private static let deadlineKey: StaticString = #","deadline":"#
    private static let presentationTimeKey: StaticString = #","presentationTime":"#
}

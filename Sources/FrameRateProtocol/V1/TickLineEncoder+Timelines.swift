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
    /// for no entries: a link with one timeline does not pay for the array.
    static func writeTimelines(_ timelines: [EncodedTimeline], into buffer: inout ByteBuffer) {
        guard !timelines.isEmpty else { return }
        buffer.writeString(#","timelines":["#)
        for (index, entry) in timelines.enumerated() {
            buffer.writeString(index == 0 ? #"{"vsyncId":"# : #",{"vsyncId":"#)
            buffer.writeString(String(entry.vsyncId))
            buffer.writeString(#","deadline":"#)
            buffer.writeString(WireTime.format(nanoseconds: entry.deadline))
            buffer.writeString(#","presentationTime":"#)
            buffer.writeString(WireTime.format(nanoseconds: entry.presentationTime))
            buffer.writeString("}")
        }
        buffer.writeString("]")
    }
}

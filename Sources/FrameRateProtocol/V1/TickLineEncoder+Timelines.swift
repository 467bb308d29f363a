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
            writeDecimal(entry.vsyncId, into: &buffer)
            buffer.writeString(#","deadline":"#)
            WireTime.write(nanoseconds: entry.deadline, into: &buffer)
            buffer.writeString(#","presentationTime":"#)
            WireTime.write(nanoseconds: entry.presentationTime, into: &buffer)
            buffer.writeString("}")
        }
        buffer.writeString("]")
    }
}

import FrameRateModel

/// One `timelines` entry of a Tick: a future frame the client may aim for, times in
/// seconds on `CLOCK_MONOTONIC`.
public struct TickTimeline: Hashable, Sendable {
    /// The display's vsync index of ``presentationTime``: what `Present`'s `vsyncId` names.
    public var vsyncId: UInt64
    /// Commit the frame by then.
    public var deadline: Double
    /// The vsync where a frame committed by ``deadline`` is shown.
    public var presentationTime: Double

    /// Builds an entry.
    public init(vsyncId: UInt64, deadline: Double, presentationTime: Double) {
        self.vsyncId = vsyncId
        self.deadline = deadline
        self.presentationTime = presentationTime
    }

    /// Parses one entry at `path`.
    public init(json: JSONValue, path: String) throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        self.vsyncId = UInt64(try reader.requiredInteger("vsyncId"))
        self.deadline = try reader.requiredNumber("deadline")
        self.presentationTime = try reader.requiredNumber("presentationTime")
    }

    /// `{"vsyncId":…,"deadline":…,"presentationTime":…}`.
    public var jsonValue: JSONValue {
        ["vsyncId": JSONValue(vsyncId), "deadline": .wireTime(seconds: deadline), "presentationTime": .wireTime(seconds: presentationTime)]
    }
}

public import FrameRateModel

/// `awaitingFrame` of a link in `Compositor/GetState`: the frame the daemon waits for
/// before it ticks the link again (``AwaitedFrame``), with wire times.
public struct AwaitingFrameState: Hashable, Sendable {
    /// The sequence of the delivered tick whose frame is unfinished.
    public var sequence: UInt64
    /// That tick's `timestamp`, seconds on `CLOCK_MONOTONIC`.
    public var since: Double
    /// The link's intervals that passed without a tick since then (at least 1).
    public var skipped: UInt64

    /// Builds one.
    public init(sequence: UInt64, since: Double, skipped: UInt64) {
        self.sequence = sequence
        self.since = since
        self.skipped = skipped
    }

    /// The model's ``AwaitedFrame``, its tick time measured from `start` (``Compositor/start``).
    public init(_ frame: AwaitedFrame, start: MonotonicClock.Instant) {
        self.init(sequence: frame.sequence, since: start.advanced(by: frame.tickTime).seconds, skipped: frame.skippedIntervals)
    }

    /// Parses the object at `path`.
    public init(json: JSONValue, path: String) throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        self.init(
            sequence: UInt64(try reader.requiredInteger("sequence", minimum: 0)), since: try reader.requiredNumber("since"),
            skipped: UInt64(try reader.requiredInteger("skipped", minimum: 0))
        )
    }

    /// The object.
    public var jsonValue: JSONValue {
        [
            "sequence": JSONValue(sequence), "since": .wireTime(seconds: since),
            "skipped": JSONValue(skipped),
        ]
    }
}

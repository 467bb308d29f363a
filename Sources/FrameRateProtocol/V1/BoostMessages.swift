public import FrameRateModel

/// `framerate.v1.DisplayLink/Boost` params: boost a link for `duration` seconds.
public struct BoostRequest: Hashable, Sendable {
    /// The longest boost, in seconds.
    public static let maximumDuration = 5.0

    /// The link.
    public var link: LinkID
    /// How long the boost lasts from now, in seconds: `0 < duration <= 5`.
    public var duration: Double
    /// The range voted while boosted, or `nil` for `{max, max, max}` of the link's own range.
    public var range: FrameRateRange?

    /// Builds a request.
    public init(link: LinkID, duration: Double, range: FrameRateRange? = nil) {
        self.link = link
        self.duration = duration
        self.range = range
    }

    /// Parses params, naming any bad field; `duration` must be a finite number of
    /// seconds with `0 < duration <= 5`.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["link", "duration", "range"])
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        let duration = try reader.requiredNumber("duration")
        guard duration.isFinite, duration > 0, duration <= Self.maximumDuration else {
            throw .invalidParams(
                field: "duration",
                "duration must be seconds with 0 < duration <= \(Int(Self.maximumDuration)), got \(reader.quotedNumber("duration") ?? "\(duration)"); "
                    + "send another Boost before it ends to hold the rate longer"
            )
        }
        self.duration = duration
        self.range = try readRange(reader, field: "range")
    }

    /// How long the boost lasts, as a duration: whole nanoseconds, at least one, so that
    /// every accepted duration, `1e-300` included, is a boost that begins (it ends at the
    /// next vsync). Clamped to 1 ns...5 s for a value built without ``init(params:)``.
    public var durationValue: Duration {
        .nanoseconds(FrameRateMath.wholeNumber((duration * 1e9).rounded(), clampedTo: 1...Int64(5_000_000_000)))
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["link": JSONValue(link.rawValue), "duration": JSONValue(duration)]
        if let range { object["range"] = range.jsonValue }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Boost` result: the link's status (as Update answers it)
/// plus when the boost ends.
public struct BoostResult: Hashable, Sendable {
    /// The link's status while boosted: rates, decision and limit.
    public var status: LinkStatusResult
    /// When the boost ends, seconds on `CLOCK_MONOTONIC` (the latest of every Boost's end).
    public var boostedUntil: Double

    /// Builds a result.
    public init(status: LinkStatusResult, boostedUntil: Double) {
        self.status = status
        self.boostedUntil = boostedUntil
    }

    /// Parses a result from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        self.status = try LinkStatusResult(json: json)
        let reader = try ParamReader(json, path: "result", allowed: nil)
        self.boostedUntil = try reader.requiredNumber("boostedUntil")
    }

    /// The result object: ``LinkStatusResult``'s fields and `boostedUntil`.
    public var jsonValue: JSONValue {
        guard case .object(var object) = status.jsonValue else { return status.jsonValue }
        object["boostedUntil"] = JSONValue(boostedUntil)
        return .object(object)
    }
}

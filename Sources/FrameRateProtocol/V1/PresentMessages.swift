public import FrameRateModel

/// `framerate.v1.DisplayLink/Present` params: the frame for tick `sequence` is committed now.
public struct PresentRequest: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// The tick whose frame this is.
    public var sequence: UInt64
    /// Show it no earlier than this, seconds on `CLOCK_MONOTONIC` (`present(at:)`).
    public var at: Double?
    /// Show it no earlier than the link's previous shown frame plus this, seconds
    /// (`present(afterMinimumDuration:)`).
    public var afterMinimumDuration: Double?
    /// The frame timeline it aims at: the `vsyncId` of one of the tick's `timelines` entries
    /// (or of a later frame of the tick, up to the seventh); `nil`: the tick's own
    /// `targetPresentationTimestamp`.
    public var vsyncId: UInt64?
    /// The speed of the fastest-moving content in the frame, points per second (finite,
    /// `>= 0`): the link's panel vote (``ContentVelocityTable``).
    public var contentVelocity: Double?

    /// The longest `afterMinimumDuration` accepted: 10 s.
    public static let maximumInterval = 10.0
    /// How far ahead of the daemon's clock `at` may be: 10 s.
    public static let maximumLead = 10.0

    /// Builds a request.
    public init(link: LinkID, sequence: UInt64, at: Double? = nil, afterMinimumDuration: Double? = nil) {
        self.link = link
        self.sequence = sequence
        self.at = at
        self.afterMinimumDuration = afterMinimumDuration
    }

    /// Parses params, naming any bad field. (`at`'s distance from now is checked by the
    /// daemon, which knows now: ``maximumLead``.)
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["link", "sequence", "at", "afterMinimumDuration", "vsyncId", "contentVelocity"])
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.sequence = UInt64(try reader.requiredInteger("sequence", minimum: 1))
        if let at = try reader.number("at") {
            guard at.isFinite, at >= 0, at < 9e9 else {
                throw .invalidParams(field: "at", "at must be seconds on CLOCK_MONOTONIC, got \(reader.quotedNumber("at") ?? "?")")
            }
            self.at = at
        }
        if let interval = try reader.number("afterMinimumDuration") {
            guard interval.isFinite, interval >= 0, interval <= Self.maximumInterval else {
                throw .invalidParams(
                    field: "afterMinimumDuration",
                    "afterMinimumDuration must be 0 to \(FrameRateMath.format(Self.maximumInterval)) seconds, got \(reader.quotedNumber("afterMinimumDuration") ?? "?")"
                )
            }
            self.afterMinimumDuration = interval
        }
        self.vsyncId = try reader.integer("vsyncId").map { UInt64($0) }
        self.contentVelocity = try readContentVelocity(reader)
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["link": JSONValue(link.rawValue), "sequence": JSONValue(sequence)]
        if let at { object["at"] = .wireTime(seconds: at) }
        if let afterMinimumDuration { object["afterMinimumDuration"] = JSONValue(afterMinimumDuration) }
        if let vsyncId { object["vsyncId"] = JSONValue(vsyncId) }
        if let contentVelocity { object["contentVelocity"] = JSONValue(contentVelocity) }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Presented` notification params: what became of one `Present`.
public struct PresentedNotification: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// The tick whose frame it was.
    public var sequence: UInt64
    /// The vsync that showed it, seconds on `CLOCK_MONOTONIC`; `0` when dropped (as Metal's `presentedTime`).
    public var presentedTime: Double
    /// When it should have been shown: the tick's `targetPresentationTimestamp` (its
    /// `targetTimestamp` at latency 1), or the aimed timeline's `presentationTime` when the
    /// `Present` named a `vsyncId`; seconds on `CLOCK_MONOTONIC`.
    public var expectedTime: Double
    /// `max(0, presentedTime − expectedTime)`, seconds; `0` when dropped.
    public var hitch: Double
    /// Whether a newer `Present` of the link replaced it before a vsync showed it.
    public var dropped: Bool

    /// Builds a notification.
    public init(link: LinkID, sequence: UInt64, presentedTime: Double, expectedTime: Double, hitch: Double, dropped: Bool) {
        self.link = link
        self.sequence = sequence
        self.presentedTime = presentedTime
        self.expectedTime = expectedTime
        self.hitch = hitch
        self.dropped = dropped
    }

    /// The notification for the model's presentation.
    public init(_ presentation: Presentation<MonotonicClock.Instant>) {
        self.link = presentation.link
        self.sequence = presentation.sequence
        self.presentedTime = presentation.presentedTime?.seconds ?? 0
        self.expectedTime = presentation.expectedTime.seconds
        self.hitch = Double(WireTime.nanoseconds(of: presentation.hitch)) / 1e9
        self.dropped = presentation.dropped
    }

    /// Parses the notification's params.
    public init(json: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(json, allowed: nil)
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.sequence = UInt64(try reader.requiredInteger("sequence", minimum: 0))
        self.presentedTime = try reader.requiredNumber("presentedTime")
        self.expectedTime = try reader.requiredNumber("expectedTime")
        self.hitch = try reader.requiredNumber("hitch")
        self.dropped = try reader.bool("dropped") ?? false
    }

    /// The params object.
    public var jsonValue: JSONValue {
        [
            "link": JSONValue(link.rawValue), "sequence": JSONValue(sequence),
            "presentedTime": dropped ? .number(JSONNumber(0)) : .wireTime(seconds: presentedTime),
            "expectedTime": .wireTime(seconds: expectedTime), "hitch": JSONValue(hitch), "dropped": .bool(dropped),
        ]
    }
}

extension HitchSummary {
    /// `{"frames":…,"late":…,"dropped":…,"timeMs":…,"ratioMsPerS":…,"window":…}`.
    public var jsonValue: JSONValue {
        [
            "frames": JSONValue(frames), "late": JSONValue(late), "dropped": JSONValue(dropped),
            "timeMs": JSONValue(Self.rounded(Double(WireTime.nanoseconds(of: hitchTime)) / 1e6)),
            "ratioMsPerS": JSONValue(Self.rounded(ratioMillisecondsPerSecond)),
            "window": JSONValue(Double(WireTime.nanoseconds(of: window)) / 1e9),
        ]
    }

    /// Milliseconds to the microsecond: the wire does not pretend to more.
    static func rounded(_ milliseconds: Double) -> Double { (milliseconds * 1000).rounded() / 1000 }

    /// Parses a summary from the daemon.
    public init(json: JSONValue, path: String) throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        self.init(
            frames: UInt64(try reader.requiredInteger("frames")), late: UInt64(try reader.requiredInteger("late")),
            dropped: UInt64(try reader.requiredInteger("dropped")),
            hitchTime: .nanoseconds(Int64(FrameRateMath.wholeNumber(try reader.requiredNumber("timeMs") * 1e6, clampedTo: 0...Int64.max))),
            ratioMillisecondsPerSecond: try reader.requiredNumber("ratioMsPerS"),
            window: .nanoseconds(Int64(FrameRateMath.wholeNumber(try reader.requiredNumber("window") * 1e9, clampedTo: 0...Int64.max)))
        )
    }
}

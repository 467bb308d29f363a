public import FrameRateModel

/// Reads a `{minimum, maximum, preferred}` object into a validated range;
/// a rule the range breaks becomes `-32602` (`INVALID_ARGUMENT`) naming `range.<field>` and
/// quoting the values as they were sent (`1000.0001`, not a rounded `1000.0`).
func readRange(_ reader: ParamReader, field: String) throws(RPCError) -> FrameRateRange? {
    guard let range = try reader.object(field, allowed: ["minimum", "maximum", "preferred"]) else { return nil }
    let minimum = try range.requiredNumber("minimum")
    let maximum = try range.requiredNumber("maximum")
    let preferred = try range.number("preferred") ?? 0
    do {
        return try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
    } catch {
        // minimum and maximum are required, so only an absent preferred (meaning 0) has no text.
        let message = error.message { field in range.quotedNumber(field.rawValue) ?? "0" }
        throw .invalidParams(field: "\(reader.fieldPath(field)).\(error.field.rawValue)", "invalid range: \(message)")
    }
}

extension FrameRateRange {
    /// `{"minimum":…,"maximum":…,"preferred":…}` in Hz.
    public var jsonValue: JSONValue {
        ["minimum": JSONValue(minimum), "maximum": JSONValue(maximum), "preferred": JSONValue(preferred)]
    }
}

extension JSONValue {
    /// A JSON number for a finite `Double` (rates in Hz, times in seconds).
    public init(_ value: Double) { self = .number(JSONNumber(value)) }
    /// A JSON number for an unsigned integer (ids, sequences).
    public init(_ value: UInt64) { self = .number(JSONNumber(value)) }
    /// A JSON string, or `null` for `nil`.
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
}

/// `framerate.v1.DisplayLink/Register` params.
public struct RegisterRequest: Hashable, Sendable {
    /// The link's frame-rate range.
    public var range: FrameRateRange
    /// The display, or `nil` for the default display.
    public var display: DisplayID?
    /// Whether the link starts paused.
    public var paused: Bool
    /// A label for people.
    public var label: String?
    /// Whether the client declares the high-frame-rate entitlement.
    public var highFrameRate: Bool
    /// Whether the link steps down while its frames keep missing their deadline (`adaptive`).
    public var adaptive: Bool = false
    /// How many future frame timelines each tick lists (`timelines`, 1...7).
    public var timelines: Int = 1
    /// In how many intervals a frame started at a tick is shown (`preferredFrameLatency`, 1 or 2).
    public var preferredFrameLatency: Int = 1

    /// Builds a request.
    public init(range: FrameRateRange, display: DisplayID? = nil, paused: Bool = false, label: String? = nil, highFrameRate: Bool = false) {
        self.range = range
        self.display = display
        self.paused = paused
        self.label = label
        self.highFrameRate = highFrameRate
    }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(
            params, allowed: ["range", "display", "paused", "label", "highFrameRate", "adaptive", "timelines", "preferredFrameLatency"]
        )
        guard let range = try readRange(reader, field: "range") else {
            throw .invalidParams(field: "range", "missing required field range ({minimum, maximum, preferred} in Hz)")
        }
        self.range = range
        self.display = try reader.integer("display").map { DisplayID(rawValue: Int($0)) }
        self.paused = try reader.bool("paused") ?? false
        self.label = try reader.string("label")
        self.highFrameRate = try reader.bool("highFrameRate") ?? false
        self.adaptive = try reader.bool("adaptive") ?? false
        self.timelines = try readTimelines(reader) ?? 1
        self.preferredFrameLatency = try readFrameLatency(reader) ?? 1
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["range": range.jsonValue, "paused": .bool(paused), "highFrameRate": .bool(highFrameRate)]
        if let display { object["display"] = .number(JSONNumber(display.rawValue)) }
        if let label { object["label"] = .string(label) }
        if adaptive { object["adaptive"] = .bool(true) }
        if timelines != 1 { object["timelines"] = .number(JSONNumber(timelines)) }
        if preferredFrameLatency != 1 { object["preferredFrameLatency"] = .number(JSONNumber(preferredFrameLatency)) }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Register` and `/Update` result.
public struct LinkStatusResult: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// The display it is on (Register only).
    public var display: DisplayID?
    /// The refresh rate arbitration chose, in Hz.
    public var refreshRate: Double
    /// The link's callback rate at that refresh rate, in Hz.
    public var callbackRate: Double
    /// The display's decision, with the pending change if it is not in force yet
    /// (`nil` only from a daemon older than the `decision` object).
    public var decision: DecisionState?
    /// How the entitlement or a cap limits this link, or `nil` when it may have what it
    /// asked for. On the wire: `limitedBy`, `wanted` and `got`, `null` when not limited.
    public var limit: LinkLimit?
    /// The link's `timelines` as in force after the request (`nil` from an older daemon).
    public var timelines: Int?
    /// The link's `preferredFrameLatency` as in force after the request (`nil` from an older daemon).
    public var preferredFrameLatency: Int?

    /// What limits this link (the wire's `limitedBy`): the entitlement, a cap, or `nil`.
    public var limitedBy: LimitReason? { limit?.by }
    /// What this link asked for when it is limited (the wire's `wanted`: its preferred
    /// rate, or its maximum without one), in Hz; `nil` when it is not limited.
    public var wanted: Double? { limit?.wanted }

    /// Builds a result from the model's status; `start` is the compositor's start
    /// (``Compositor/start``), which the decision's pending time is measured from;
    /// `showingLabelOf` says whose labels the caller may see in the decision's reason.
    public init(
        _ status: LinkStatus, includeDisplay: Bool, start: MonotonicClock.Instant, showingLabelOf showingLabel: (LinkID) -> Bool
    ) {
        self.link = status.link
        self.display = includeDisplay ? status.display : nil
        self.refreshRate = status.refreshRate
        self.callbackRate = status.callbackRate
        self.decision = DecisionState(status.decision, start: start, showingLabelOf: showingLabel)
        self.limit = status.limit
    }

    /// Builds a result from its fields.
    public init(
        link: LinkID, display: DisplayID?, refreshRate: Double, callbackRate: Double, decision: DecisionState?, limit: LinkLimit?
    ) {
        self.link = link
        self.display = display
        self.refreshRate = refreshRate
        self.callbackRate = callbackRate
        self.decision = decision
        self.limit = limit
    }

    /// Parses a result from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        let reader = try ParamReader(json, path: "result", allowed: nil)
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.display = try reader.integer("display").map { DisplayID(rawValue: Int($0)) }
        self.refreshRate = try reader.requiredNumber("refreshRate")
        self.callbackRate = try reader.requiredNumber("callbackRate")
        if let decision = json["decision"], !decision.isNull {
            self.decision = try DecisionState(json: decision, path: reader.fieldPath("decision"))
        } else {
            self.decision = nil
        }
        self.limit = try readLinkLimit(reader, link: link)
        self.timelines = try reader.integer("timelines", minimum: 1, maximum: Int64(FrameSchedule.maximumFrames)).map { Int($0) }
        self.preferredFrameLatency = try reader.integer("preferredFrameLatency", minimum: 1, maximum: 2).map { Int($0) }
    }

    /// The result object: `decision`, `limitedBy`, `wanted` and `got` are always present
    /// (`null` when there is nothing to say).
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "link": JSONValue(link.rawValue), "refreshRate": JSONValue(refreshRate), "callbackRate": JSONValue(callbackRate),
            "decision": decision?.jsonValue ?? .null,
        ]
        writeLinkLimit(limit, into: &object)
        if let display { object["display"] = .number(JSONNumber(display.rawValue)) }
        if let timelines { object["timelines"] = .number(JSONNumber(timelines)) }
        if let preferredFrameLatency { object["preferredFrameLatency"] = .number(JSONNumber(preferredFrameLatency)) }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Update` params.
public struct UpdateRequest: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// A new range, or `nil` to keep it.
    public var range: FrameRateRange?
    /// A new paused flag, or `nil` to keep it.
    public var paused: Bool?
    /// A new adaptive flag, or `nil` to keep it.
    public var adaptive: Bool?
    /// A new number of frame timelines per tick (1...7), or `nil` to keep it.
    public var timelines: Int?
    /// A new frame latency (1 or 2), or `nil` to keep it.
    public var preferredFrameLatency: Int?

    /// Builds a request.
    public init(link: LinkID, range: FrameRateRange? = nil, paused: Bool? = nil, adaptive: Bool? = nil) {
        self.link = link
        self.range = range
        self.paused = paused
        self.adaptive = adaptive
    }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["link", "range", "paused", "adaptive", "timelines", "preferredFrameLatency"])
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.range = try readRange(reader, field: "range")
        self.paused = try reader.bool("paused")
        self.adaptive = try reader.bool("adaptive")
        self.timelines = try readTimelines(reader)
        self.preferredFrameLatency = try readFrameLatency(reader)
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["link": JSONValue(link.rawValue)]
        if let range { object["range"] = range.jsonValue }
        if let paused { object["paused"] = .bool(paused) }
        if let adaptive { object["adaptive"] = .bool(adaptive) }
        if let timelines { object["timelines"] = .number(JSONNumber(timelines)) }
        if let preferredFrameLatency { object["preferredFrameLatency"] = .number(JSONNumber(preferredFrameLatency)) }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Invalidate` params (and `Compositor/Unwatch`'s shape with `watch`).
public struct LinkRequest: Hashable, Sendable {
    /// The link.
    public var link: LinkID

    /// Builds a request.
    public init(link: LinkID) { self.link = link }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["link"])
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
    }

    /// The params object.
    public var jsonValue: JSONValue { ["link": JSONValue(link.rawValue)] }
}

/// `framerate.v1.DisplayLink/FrameDone` params.
public struct FrameDoneRequest: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// The tick's sequence whose frame is finished.
    public var sequence: UInt64
    /// The speed of the fastest-moving content in the frame, points per second (finite,
    /// `>= 0`): the link's panel vote (``ContentVelocityTable``).
    public var contentVelocity: Double?

    /// Builds a request.
    public init(link: LinkID, sequence: UInt64, contentVelocity: Double? = nil) {
        self.link = link
        self.sequence = sequence
        self.contentVelocity = contentVelocity
    }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["link", "sequence", "contentVelocity"])
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.sequence = UInt64(try reader.requiredInteger("sequence", minimum: 0))
        self.contentVelocity = try readContentVelocity(reader)
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["link": JSONValue(link.rawValue), "sequence": JSONValue(sequence)]
        if let contentVelocity { object["contentVelocity"] = JSONValue(contentVelocity) }
        return .object(object)
    }
}

/// `framerate.v1.DisplayLink/Closed` notification params: the daemon ended a link.
public struct LinkClosedNotification: Hashable, Sendable {
    /// The link that ended.
    public var link: LinkID
    /// Why, as a gRPC status (`UNAVAILABLE` at shutdown).
    public var status: GRPCStatusCode
    /// A sentence for people.
    public var message: String

    /// Builds a notification.
    public init(link: LinkID, status: GRPCStatusCode, message: String) {
        self.link = link
        self.status = status
        self.message = message
    }

    /// Parses the notification's params.
    public init(json: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(json, allowed: nil)
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.status = (try reader.string("status")).flatMap(GRPCStatusCode.init(name:)) ?? .unknown
        self.message = try reader.string("message", maximumLength: 4096) ?? ""
    }

    /// The params object.
    public var jsonValue: JSONValue {
        ["link": JSONValue(link.rawValue), "status": .string(status.name), "message": .string(message)]
    }
}

public import FrameRateModel

/// The `decision` object: one arbitration of one display, as it travels in the
/// results of `DisplayLink/Register` and `/Update`, in each display of
/// `Compositor/GetState`, and in every `refreshRateChanged` event.
///
/// The wire form of the model's ``Decision``; times are seconds on `CLOCK_MONOTONIC`
/// (the model's are durations since the compositor's start). The names and values of
/// ``rule``, ``DecisionCap/source`` and ``LinkLimit/by`` are the ones in
/// `docs/arbitration.md`.
public struct DecisionState: Hashable, Sendable {
    /// The rate this decision chose, in Hz.
    public var rate: Double
    /// The ladder step that chose it.
    public var rule: ArbitrationRule
    /// The links that hold the display at this rate, lowest id first (at most
    /// ``Decision/listLimit``); empty when a cap or idle decides.
    public var deciders: [LinkID]
    /// How many links hold the display at this rate in all.
    public var deciderCount: Int
    /// The cap in force, whether or not it limits a link; `nil` without one.
    public var cap: DecisionCap?
    /// The voting links that get less than they asked for, lowest id first (at most ``Decision/listLimit``).
    public var limited: [LinkLimit]
    /// How many voting links are limited in all.
    public var limitedCount: Int
    /// A change already decided and not yet in force; `nil` when the rate is in force.
    public var pending: DecisionPending?
    /// The same decision in one sentence for people.
    public var reason: String
    /// Whether a boost holds the rate (a boosted link is among the deciders); on the wire
    /// only when `true`.
    public var boosted: Bool = false

    /// Builds a decision from its fields.
    public init(
        rate: Double, rule: ArbitrationRule, deciders: [LinkID], deciderCount: Int? = nil, cap: DecisionCap?,
        limited: [LinkLimit], limitedCount: Int? = nil, pending: DecisionPending?, reason: String
    ) {
        self.rate = rate
        self.rule = rule
        self.deciders = deciders
        self.deciderCount = deciderCount ?? deciders.count
        self.cap = cap
        self.limited = limited
        self.limitedCount = limitedCount ?? limited.count
        self.pending = pending
        self.reason = reason
    }

    /// The wire form of the model's `decision`; `start` is the compositor's start
    /// (``Compositor/start``), which the pending change's time is measured from.
    /// `showingLabelOf` says whose labels the viewer may see in ``reason``
    /// (``Decision/reason(showingLabelOf:)``): the holder's, root and the admin group.
    public init(_ decision: Decision, start: MonotonicClock.Instant, showingLabelOf showingLabel: (LinkID) -> Bool) {
        self.init(
            rate: decision.rate, rule: decision.rule, deciders: decision.deciders, deciderCount: decision.deciderCount,
            cap: decision.cap.map { DecisionCap(source: $0.kind, hz: $0.rate) }, limited: decision.limited,
            limitedCount: decision.limitedCount,
            pending: decision.pending.map { DecisionPending(rate: $0.rate, at: start.advanced(by: $0.at).seconds) },
            reason: decision.reason(showingLabelOf: showingLabel)
        )
        self.boosted = decision.boosted
    }

    /// The limit of `link`, if it is one of the listed ``limited`` links.
    public func limit(of link: LinkID) -> LinkLimit? {
        limited.first { $0.link == link }
    }

    /// The most links ``deciders`` or ``limited`` may list when parsed (the daemon lists
    /// at most ``Decision/listLimit``; a little slack for a newer daemon).
    static let parsedListLimit = 256

    /// Parses a decision from the daemon.
    /// - Throws: `-32602` naming the field (`decision.rule`, `decision.limited.by`, …)
    ///   when one is missing, malformed or has a value this version does not know.
    public init(json: JSONValue, path: String = "decision") throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        self.rate = try reader.requiredNumber("rate")
        self.rule = try readName(reader, "rule", as: ArbitrationRule.self)
        let deciders = try readBoundedArray(reader, "deciders")
        self.deciders = try deciders.map { (value) throws(RPCError) in
            guard let id = value.int64Value, id >= 1 else {
                throw .invalidParams(field: reader.fieldPath("deciders"), "\(reader.fieldPath("deciders")) must hold link ids (integers >= 1)")
            }
            return LinkID(rawValue: UInt64(id))
        }
        self.deciderCount = Int(try reader.integer("deciderCount") ?? Int64(deciders.count))
        if let cap = try reader.object("cap", allowed: nil) {
            self.cap = DecisionCap(source: try readName(cap, "source", as: CapSource.self), hz: try cap.requiredNumber("hz"))
        } else {
            self.cap = nil
        }
        var limited: [LinkLimit] = []
        for entry in try readBoundedArray(reader, "limited") {
            let limit = try ParamReader(entry, path: reader.fieldPath("limited"), allowed: nil)
            var entry = LinkLimit(
                link: LinkID(rawValue: UInt64(try limit.requiredInteger("link", minimum: 1))),
                by: try readName(limit, "by", as: LimitReason.self),
                wanted: try limit.requiredNumber("wanted"), got: try limit.requiredNumber("got")
            )
            entry.contentVelocity = try limit.number("contentVelocity")
            limited.append(entry)
        }
        self.limited = limited
        self.limitedCount = Int(try reader.integer("limitedCount") ?? Int64(limited.count))
        if let pending = try reader.object("pending", allowed: nil) {
            self.pending = DecisionPending(rate: try pending.requiredNumber("rate"), at: try pending.requiredNumber("at"))
        } else {
            self.pending = nil
        }
        self.reason = try reader.string("reason", maximumLength: 1 << 16) ?? ""
        self.boosted = try reader.bool("boosted") ?? false
    }

    /// The decision object.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "rate": JSONValue(rate), "rule": .string(rule.rawValue),
            "deciders": .array(deciders.map { JSONValue($0.rawValue) }), "deciderCount": .number(JSONNumber(deciderCount)),
            "cap": cap?.jsonValue ?? .null,
            "limited": .array(limited.map(\.jsonValue)), "limitedCount": .number(JSONNumber(limitedCount)),
            "pending": pending?.jsonValue ?? .null, "reason": .string(reason),
        ]
        if boosted { object["boosted"] = .bool(true) }
        return .object(object)
    }
}

/// The cap in a decision: what imposes it and its rate.
public struct DecisionCap: Hashable, Sendable {
    /// What imposes it.
    public var source: CapSource
    /// The highest rate it allows, in Hz.
    public var hz: Double

    /// Builds a cap.
    public init(source: CapSource, hz: Double) {
        self.source = source
        self.hz = hz
    }

    /// `{"source":"lowPower","hz":60.0}`.
    public var jsonValue: JSONValue { ["source": .string(source.rawValue), "hz": JSONValue(hz)] }
}

/// A change in a decision that is decided and not yet in force.
public struct DecisionPending: Hashable, Sendable {
    /// The rate the display will run at, in Hz.
    public var rate: Double
    /// The vsync it takes effect at, seconds on `CLOCK_MONOTONIC`.
    public var at: Double

    /// Builds a pending change.
    public init(rate: Double, at: Double) {
        self.rate = rate
        self.at = at
    }

    /// `{"rate":10.0,"at":1234.567000000}`.
    public var jsonValue: JSONValue { ["rate": JSONValue(rate), "at": .wireTime(seconds: at)] }
}

extension LinkLimit {
    /// `{"link":1,"by":"entitlement","wanted":120.0,"got":60.0}`; a `velocity` limit adds
    /// `"contentVelocity"` (points/s).
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "link": JSONValue(link.rawValue), "by": .string(by.rawValue), "wanted": JSONValue(wanted), "got": JSONValue(got),
        ]
        if let contentVelocity { object["contentVelocity"] = JSONValue(contentVelocity) }
        return .object(object)
    }
}

extension JSONValue {
    /// A time on `CLOCK_MONOTONIC` in seconds, written with nanosecond precision like
    /// the ticks' timestamps (`1234.567000000`).
    public static func wireTime(_ instant: MonotonicClock.Instant) -> JSONValue {
        let nanoseconds = instant.nanoseconds
        guard nanoseconds >= 0, let number = JSONNumber(text: WireTime.format(nanoseconds: nanoseconds)) else {
            return JSONValue(instant.seconds)
        }
        return .number(number)
    }

    /// ``wireTime(_:)`` for seconds held as a `Double` (rounded to whole nanoseconds).
    public static func wireTime(seconds: Double) -> JSONValue {
        guard seconds.isFinite, seconds >= 0, seconds < 9e9 else { return seconds.isFinite ? JSONValue(seconds) : .null }
        return wireTime(MonotonicClock.Instant(nanoseconds: Int64((seconds * 1e9).rounded())))
    }
}

/// Reads a link's own limit from flat `limitedBy`, `wanted` and `got` fields (`nil` when
/// `limitedBy` is absent or `null`), as the Register and Update results and GetState's links carry it.
func readLinkLimit(_ reader: ParamReader, link: LinkID) throws(RPCError) -> LinkLimit? {
    guard let by = try readOptionalName(reader, "limitedBy", as: LimitReason.self) else { return nil }
    return LinkLimit(link: link, by: by, wanted: try reader.requiredNumber("wanted"), got: try reader.requiredNumber("got"))
}

/// Writes a link's own limit as flat `limitedBy`, `wanted` and `got` fields, each `null` when not limited.
func writeLinkLimit(_ limit: LinkLimit?, into object: inout JSONObject) {
    object["limitedBy"] = limit.map { .string($0.by.rawValue) } ?? .null
    object["wanted"] = limit.map { JSONValue($0.wanted) } ?? .null
    object["got"] = limit.map { JSONValue($0.got) } ?? .null
}

/// Reads a required string field whose value must be one of `Name`'s raw values.
func readName<Name: RawRepresentable & CaseIterable>(
    _ reader: ParamReader, _ field: String, as type: Name.Type
) throws(RPCError) -> Name where Name.RawValue == String {
    let names = Name.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
    guard let name = try reader.string(field) else {
        throw .invalidParams(field: reader.fieldPath(field), "missing required field \(reader.fieldPath(field)) (one of \(names))")
    }
    guard let value = Name(rawValue: name) else {
        throw .invalidParams(field: reader.fieldPath(field), "\(reader.fieldPath(field)) must be one of \(names), got \"\(name)\"")
    }
    return value
}

/// ``readName(_:_:as:)`` for an optional field: `nil` when absent or `null`.
func readOptionalName<Name: RawRepresentable & CaseIterable>(
    _ reader: ParamReader, _ field: String, as type: Name.Type
) throws(RPCError) -> Name? where Name.RawValue == String {
    guard try reader.string(field) != nil else { return nil }
    return try readName(reader, field, as: type)
}

/// Reads an array of at most ``DecisionState/parsedListLimit`` entries (empty when absent).
private func readBoundedArray(_ reader: ParamReader, _ field: String) throws(RPCError) -> [JSONValue] {
    let values = try reader.array(field) ?? []
    guard values.count <= DecisionState.parsedListLimit else {
        throw .invalidParams(
            field: reader.fieldPath(field), "\(reader.fieldPath(field)) lists more than \(DecisionState.parsedListLimit) links"
        )
    }
    return values
}

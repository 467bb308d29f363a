public import FrameRateModel

/// One thing the daemon did, as `framerate.v1.Compositor/TraceRecords` carries it: a JSON
/// array whose first element names the kind. Times are seconds on `CLOCK_MONOTONIC`.
///
/// | kind | array |
/// |---|---|
/// | vsync | `["vsync", display, at]` |
/// | tick | `["tick", display, link, sequence, timestamp, targetTimestamp, skipped, refreshRate]` |
/// | rate change | `["rate", display, at, from, to]` (Hz) |
/// | decision | `["decision", display, at, rate, rule, reason]` |
/// | present | `["present", display, link, sequence, at]` (when the daemon read it) |
/// | presented | `["presented", display, link, sequence, presentedTime, expectedTime, hitch, dropped]` |
/// | link added | `["link", display, at, LINK]` (LINK as in GetState: identity and label) |
/// | link removed | `["unlink", display, at, link]` |
public enum TraceRecord: Hashable, Sendable {
    case vsync(display: DisplayID, at: Double)
    case tick(display: DisplayID, link: LinkID, sequence: UInt64, timestamp: Double, targetTimestamp: Double, skipped: UInt64, refreshRate: Double)
    case rateChange(display: DisplayID, at: Double, from: Double, to: Double)
    /// `reasonWithoutLabels`: the reason naming links without their labels, for viewers who may
    /// not see every holder (the daemon side only; not on the wire, `nil` when parsed).
    case decision(display: DisplayID, at: Double, rate: Double, rule: String, reason: String, reasonWithoutLabels: String? = nil)
    case present(display: DisplayID, link: LinkID, sequence: UInt64, at: Double)
    case presented(display: DisplayID, PresentedNotification)
    case linkAdded(display: DisplayID, at: Double, LinkState)
    case linkRemoved(display: DisplayID, at: Double, link: LinkID)

    /// The display the record is about.
    public var display: DisplayID {
        switch self {
        case .vsync(let display, _), .tick(let display, _, _, _, _, _, _), .rateChange(let display, _, _, _),
            .decision(let display, _, _, _, _, _), .present(let display, _, _, _), .presented(let display, _),
            .linkAdded(let display, _, _), .linkRemoved(let display, _, _):
            display
        }
    }

    /// The record's array.
    public var jsonValue: JSONValue {
        func d(_ display: DisplayID) -> JSONValue { .number(JSONNumber(display.rawValue)) }
        func t(_ seconds: Double) -> JSONValue { .wireTime(seconds: seconds) }
        switch self {
        case .vsync(let display, let at):
            return ["vsync", d(display), t(at)]
        case .tick(let display, let link, let sequence, let timestamp, let target, let skipped, let rate):
            return [
                "tick", d(display), JSONValue(link.rawValue), JSONValue(sequence), t(timestamp), t(target), JSONValue(skipped),
                JSONValue(rate),
            ]
        case .rateChange(let display, let at, let from, let to):
            return ["rate", d(display), t(at), JSONValue(from), JSONValue(to)]
        case .decision(let display, let at, let rate, let rule, let reason, _):
            return ["decision", d(display), t(at), JSONValue(rate), .string(rule), .string(reason)]
        case .present(let display, let link, let sequence, let at):
            return ["present", d(display), JSONValue(link.rawValue), JSONValue(sequence), t(at)]
        case .presented(let display, let notification):
            return [
                "presented", d(display), JSONValue(notification.link.rawValue), JSONValue(notification.sequence),
                notification.dropped ? .number(JSONNumber(0)) : t(notification.presentedTime), t(notification.expectedTime),
                JSONValue(notification.hitch), .bool(notification.dropped),
            ]
        case .linkAdded(let display, let at, let link):
            return ["link", d(display), t(at), link.jsonValue]
        case .linkRemoved(let display, let at, let link):
            return ["unlink", d(display), t(at), JSONValue(link.rawValue)]
        }
    }

    /// Parses a record; `nil` for a kind this version does not know (a newer daemon's).
    public init?(json: JSONValue) throws(RPCError) {
        guard let items = json.arrayValue, let kind = items.first?.stringValue, items.count >= 3 else {
            throw .invalidParams(field: "records", "a trace record must be an array starting with its kind and display")
        }
        func number(_ index: Int) throws(RPCError) -> Double {
            guard index < items.count, let value = items[index].doubleValue, value.isFinite else {
                throw .invalidParams(field: "records", "trace record \(kind): element \(index) must be a number")
            }
            return value
        }
        func whole(_ index: Int) throws(RPCError) -> UInt64 {
            let value = try number(index)
            guard value >= 0, value < 1.8e19, value == value.rounded() else {
                throw .invalidParams(field: "records", "trace record \(kind): element \(index) must be a whole number")
            }
            return UInt64(value)
        }
        func text(_ index: Int) throws(RPCError) -> String {
            guard index < items.count, let value = items[index].stringValue else {
                throw .invalidParams(field: "records", "trace record \(kind): element \(index) must be a string")
            }
            return value
        }
        let display = DisplayID(rawValue: Int(clamping: try whole(1)))
        switch kind {
        case "vsync": self = .vsync(display: display, at: try number(2))
        case "tick":
            self = .tick(
                display: display, link: LinkID(rawValue: try whole(2)), sequence: try whole(3), timestamp: try number(4),
                targetTimestamp: try number(5), skipped: try whole(6), refreshRate: try number(7)
            )
        case "rate": self = .rateChange(display: display, at: try number(2), from: try number(3), to: try number(4))
        case "decision":
            self = .decision(display: display, at: try number(2), rate: try number(3), rule: try text(4), reason: try text(5))
        case "present":
            self = .present(display: display, link: LinkID(rawValue: try whole(2)), sequence: try whole(3), at: try number(4))
        case "presented":
            guard items.count > 7, let dropped = items[7].boolValue else {
                throw .invalidParams(field: "records", "trace record presented: element 7 must be a boolean")
            }
            self = .presented(
                display: display,
                PresentedNotification(
                    link: LinkID(rawValue: try whole(2)), sequence: try whole(3), presentedTime: try number(4),
                    expectedTime: try number(5), hitch: try number(6), dropped: dropped
                )
            )
        case "link":
            guard items.count > 3 else { throw .invalidParams(field: "records", "trace record link: element 3 must be a link") }
            self = .linkAdded(display: display, at: try number(2), try LinkState(json: items[3]))
        case "unlink": self = .linkRemoved(display: display, at: try number(2), link: LinkID(rawValue: try whole(3)))
        default: return nil
        }
    }
}

/// `framerate.v1.Compositor/TraceRecords` params: a batch of a trace's records.
public struct TraceRecordsNotification: Hashable, Sendable {
    /// The trace.
    public var trace: UInt64
    /// The records, in the order the daemon made them (per display, in time order).
    public var records: [TraceRecord]
    /// Records the daemon could not keep since the previous batch (the client read too slowly).
    public var lost: UInt64

    /// Builds a notification.
    public init(trace: UInt64, records: [TraceRecord], lost: UInt64) {
        self.trace = trace
        self.records = records
        self.lost = lost
    }

    /// Parses the params; records of unknown kinds are skipped.
    public init(json: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(json, allowed: nil)
        self.trace = UInt64(try reader.requiredInteger("trace", minimum: 1))
        var records: [TraceRecord] = []
        for item in try reader.array("records") ?? [] {
            if let record = try TraceRecord(json: item) { records.append(record) }
        }
        self.records = records
        self.lost = UInt64(try reader.integer("lost") ?? 0)
    }

    /// The params object.
    public var jsonValue: JSONValue {
        ["trace": JSONValue(trace), "records": .array(records.map(\.jsonValue)), "lost": JSONValue(lost)]
    }
}

public import FrameRateModel
public import NIOCore
import UntrustedText

/// Who holds a link, from the peer credentials of its connection (`SO_PEERCRED`).
public struct PeerIdentity: Hashable, Sendable {
    /// The peer's process id.
    public var pid: Int32
    /// The peer's user id.
    public var uid: UInt32
    /// The peer's command name (`/proc/PID/comm`), if readable.
    public var command: String?

    /// Builds an identity.
    public init(pid: Int32, uid: UInt32, command: String?) {
        self.pid = pid
        self.uid = uid
        self.command = command
    }
}

extension DisplayCaps {
    /// `{"lowPowerMode":…,"limitFrameRate":…,"thermalState":"nominal"}`.
    public var jsonValue: JSONValue {
        [
            "lowPowerMode": .bool(lowPowerMode), "limitFrameRate": .bool(limitFrameRate),
            "thermalState": .string(thermalState.rawValue),
        ]
    }

    /// Parses caps from the daemon.
    public init(json: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(json, path: "caps", allowed: nil)
        self.init(
            lowPowerMode: try reader.bool("lowPowerMode") ?? false,
            limitFrameRate: try reader.bool("limitFrameRate") ?? false,
            thermalState: try readThermalState(reader) ?? .nominal
        )
    }
}

func readThermalState(_ reader: ParamReader) throws(RPCError) -> ThermalState? {
    guard let name = try reader.string("thermalState") else { return nil }
    guard let state = ThermalState(rawValue: name) else {
        throw .invalidParams(
            field: reader.fieldPath("thermalState"),
            "thermalState must be one of " + ThermalState.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                + ", got \"\(EchoedValue.text(name))\""
        )
    }
    return state
}

/// Writes who holds a link (`pid`, `uid`, `command`, `label`): the one encoding of a link's
/// identity, shared by GetState's links and residency's `heldBy`, so a rule about what a
/// viewer may see of it applies to both.
func writeLinkIdentity(peer: PeerIdentity?, label: String?, into object: inout JSONObject) {
    guard let peer else {
        // Hidden from this viewer (another user's link): the label is its holder's words too.
        for key in ["pid", "uid", "command", "label"] { object[key] = .null }
        return
    }
    object["pid"] = .number(JSONNumber(Int(peer.pid)))
    object["uid"] = .number(JSONNumber(Int(peer.uid)))
    object["command"] = JSONValue(peer.command)
    object["label"] = JSONValue(label)
}

/// One link as `Compositor/GetState` shows it.
public struct LinkState: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// Its range as registered.
    public var range: FrameRateRange
    /// Whether it is paused.
    public var paused: Bool
    /// Its callback rate at the rate in force, in Hz.
    public var callbackRate: Double
    /// Its label (`nil` without one, or when ``peer`` is hidden: a label is its holder's words).
    public var label: String?
    /// Whether its client declared the high-frame-rate entitlement.
    public var highFrameRate: Bool
    /// Who holds it; `nil` when the viewer may not know: another user's link, seen by a
    /// viewer that is not root, the daemon's user or in the admin group (on the wire
    /// `pid`, `uid`, `command` and `label` are then `null`).
    public var peer: PeerIdentity?
    /// When it was registered, seconds on `CLOCK_MONOTONIC` (`nil` from a daemon older
    /// than the field), so old holders can be told from new ones.
    public var since: Double?
    /// How the entitlement or a cap limits it (paused or not), or `nil` when it may have
    /// what it asked for. On the wire: `limitedBy`, `wanted` and `got`, `null` when not limited.
    public var limit: LinkLimit?
    /// Its presented frames and hitches; `nil` when it never sent `Present` (or from an older daemon).
    public var hitches: HitchSummary?
    /// How many frame timelines its ticks list (`timelines`; 1 from an older daemon).
    public var timelines: Int = 1
    /// Its `preferredFrameLatency` (1 from an older daemon).
    public var preferredFrameLatency: Int = 1
    /// Whether it steps down while its frames keep missing their deadline (`adaptive`).
    public var adaptive: Bool = false
    /// When its boost in force ends, seconds on `CLOCK_MONOTONIC`; `nil` when not boosted.
    public var boostedUntil: Double?
    /// The frame the daemon waits for before it ticks the link again, once an interval
    /// passed without a tick because of it (`awaitingFrame`); `nil` otherwise.
    public var awaitingFrame: AwaitingFrameState?

    /// Builds a link state from the model's snapshot and the owner's identity (`nil`:
    /// hidden from this viewer, and so is the label); `start` is the compositor's start
    /// (``Compositor/start``), which `since` is measured from.
    public init(_ snapshot: LinkSnapshot, peer: PeerIdentity?, start: MonotonicClock.Instant) {
        self.link = snapshot.link
        self.range = snapshot.configuration.range
        self.paused = snapshot.configuration.isPaused
        self.callbackRate = snapshot.callbackRate
        self.label = peer == nil ? nil : snapshot.configuration.label
        self.highFrameRate = snapshot.configuration.hasHighFrameRateEntitlement
        self.peer = peer
        self.since = start.advanced(by: snapshot.since).seconds
        self.limit = snapshot.limit
        self.hitches = snapshot.hitches
        self.timelines = snapshot.configuration.timelines
        self.preferredFrameLatency = snapshot.configuration.frameLatency
        self.adaptive = snapshot.configuration.isAdaptive
        self.boostedUntil = snapshot.boostedUntil.map { start.advanced(by: $0).seconds }
        self.awaitingFrame = snapshot.awaitedFrame.map { AwaitingFrameState($0, start: start) }
    }

    /// Parses a link from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        let reader = try ParamReader(json, path: "link", allowed: nil)
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        guard let range = try readRange(reader, field: "range") else { throw .invalidParams(field: "range", "missing range") }
        self.range = range
        self.paused = try reader.bool("paused") ?? false
        self.callbackRate = try reader.requiredNumber("callbackRate")
        self.label = try reader.string("label")
        self.highFrameRate = try reader.bool("highFrameRate") ?? false
        let pid = try reader.integer("pid", as: Int32.self)
        let command = try reader.string("command", maximumLength: 4096)
        self.peer = try reader.integer("uid", as: UInt32.self).map { PeerIdentity(pid: pid ?? 0, uid: $0, command: command) }
        self.since = try reader.number("since")
        self.limit = try readLinkLimit(reader, link: link)
        if let hitches = json["hitches"], !hitches.isNull {
            self.hitches = try HitchSummary(json: hitches, path: reader.fieldPath("hitches"))
        }
        self.timelines = try reader.integer("timelines", minimum: 1, maximum: Int64(FrameSchedule.maximumFrames)).map { Int($0) } ?? 1
        self.preferredFrameLatency = try reader.integer("preferredFrameLatency", minimum: 1, maximum: 2).map { Int($0) } ?? 1
        self.adaptive = try reader.bool("adaptive") ?? false
        self.boostedUntil = try reader.number("boostedUntil")
        if let awaiting = json["awaitingFrame"], !awaiting.isNull {
            self.awaitingFrame = try AwaitingFrameState(json: awaiting, path: reader.fieldPath("awaitingFrame"))
        }
    }

    /// The link object.
    public var jsonValue: JSONValue {
        // The identity's members are placeholders here, filled in place (the order stays) by
        // the one identity encoding.
        var object: JSONObject = [
            "link": JSONValue(link.rawValue), "range": range.jsonValue, "paused": .bool(paused),
            "callbackRate": JSONValue(callbackRate), "label": .null, "highFrameRate": .bool(highFrameRate),
            "pid": .null, "uid": .null, "command": .null, "since": since.map { JSONValue.wireTime(seconds: $0) } ?? .null,
        ]
        writeLinkIdentity(peer: peer, label: label, into: &object)
        writeLinkLimit(limit, into: &object)
        object["hitches"] = hitches?.jsonValue ?? .null
        object["timelines"] = .number(JSONNumber(timelines))
        object["preferredFrameLatency"] = .number(JSONNumber(preferredFrameLatency))
        object["adaptive"] = .bool(adaptive)
        object["boostedUntil"] = boostedUntil.map { JSONValue.wireTime(seconds: $0) } ?? .null
        object["awaitingFrame"] = awaitingFrame?.jsonValue ?? .null
        return .object(object)
    }
}

/// One display as `Compositor/GetState` shows it.
public struct DisplayState: Hashable, Sendable {
    /// The display.
    public var id: DisplayID
    /// Its profile's name.
    public var profile: String
    /// Its supported rates, Hz, highest first.
    public var supportedRates: [Double]
    /// The rate in force, Hz.
    public var refreshRate: Double
    /// Why.
    public var reason: String
    /// The caps in force.
    public var caps: DisplayCaps
    /// Its links, in registration order.
    public var links: [LinkState]
    /// The latest arbitration, with the pending change if it is not in force yet
    /// (`nil` only from a daemon older than the `decision` object).
    public var decision: DecisionState?
    /// Time at each rate since the display started and who held it there, highest rate first
    /// (empty from an older daemon).
    public var residency: [ResidencyRateState] = []
    /// The time ``residency`` covers, seconds: from the display's start to when the state
    /// was taken (`nil` from an older daemon).
    public var uptime: Double?
    /// The panel rate in force, Hz: ``refreshRate`` unless a link's `contentVelocity`
    /// lowers the panel, while the links' callbacks stay on the ``refreshRate`` grid
    /// (`nil` from an older daemon).
    public var panelRate: Double?
    /// The panel arbitration, while a `contentVelocity` report is in force or the panel
    /// runs below the grid; `nil` when it is ``decision``.
    public var panelDecision: DecisionState?

    /// Builds a display state from the model's snapshot; `peer` names each link's holder,
    /// or is `nil` for a holder this viewer may not know (whose labels the reasons then
    /// leave out too); `start` is the compositor's start (``Compositor/start``), which
    /// times are measured from; `now` is when the snapshot was taken (``uptime``).
    public init(
        _ snapshot: DisplaySnapshot, start: MonotonicClock.Instant, now: MonotonicClock.Instant? = nil,
        peer: (OwnerID) -> PeerIdentity?
    ) {
        self.id = snapshot.id
        self.profile = snapshot.profile.name
        self.supportedRates = snapshot.profile.supportedRates
        self.refreshRate = snapshot.refreshRate
        self.caps = snapshot.caps
        self.links = snapshot.links.map { LinkState($0, peer: peer($0.owner), start: start) }
        // The decision names links of this display only.
        let hidden = Set(links.lazy.filter { $0.peer == nil }.map(\.link))
        let showingLabel = { (link: LinkID) in !hidden.contains(link) }
        self.reason = snapshot.reason(showingLabelOf: showingLabel)
        self.decision = DecisionState(snapshot.decision, start: start, showingLabelOf: showingLabel)
        self.residency = snapshot.residency.map { ResidencyRateState($0, peer: peer) }
        self.uptime = now.map { ResidencyRateState.seconds(start.duration(to: $0)) }
        self.panelRate = snapshot.panelRate
        self.panelDecision = snapshot.panelDecision.map { DecisionState($0, start: start, showingLabelOf: showingLabel) }
    }

    /// Parses a display from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        let reader = try ParamReader(json, path: "display", allowed: nil)
        self.id = DisplayID(rawValue: Int(try reader.requiredInteger("id")))
        self.profile = try reader.string("profile", maximumLength: 4096) ?? ""
        self.supportedRates = (try reader.array("supportedRates") ?? []).compactMap(\.doubleValue)
        self.refreshRate = try reader.requiredNumber("refreshRate")
        self.reason = try reader.string("reason", maximumLength: 1 << 16) ?? ""
        self.caps = try DisplayCaps(json: json["caps"])
        var links: [LinkState] = []
        for link in try reader.array("links") ?? [] { links.append(try LinkState(json: link)) }
        self.links = links
        if let decision = json["decision"], !decision.isNull {
            self.decision = try DecisionState(json: decision, path: reader.fieldPath("decision"))
        } else {
            self.decision = nil
        }
        var residency: [ResidencyRateState] = []
        for entry in try reader.array("residency") ?? [] {
            residency.append(try ResidencyRateState(json: entry, path: reader.fieldPath("residency")))
        }
        self.residency = residency
        self.uptime = try reader.number("uptime")
        self.panelRate = try reader.number("panelRate")
        if let decision = json["panelDecision"], !decision.isNull {
            self.panelDecision = try DecisionState(json: decision, path: reader.fieldPath("panelDecision"))
        }
    }

    /// The display object.
    public var jsonValue: JSONValue { .object(jsonObject(links: .array(links.map(\.jsonValue)))) }

    /// Appends the display object (exactly ``jsonValue``'s bytes), each link written by
    /// `writeLink`, which must append that link's ``LinkState/jsonValue`` as compact JSON
    /// (or bytes kept from an earlier encoding of an equal link).
    public func writeJSON(into buffer: inout ByteBuffer, writeLink: (LinkState, inout ByteBuffer) -> Void) {
        JSONSerializer.serialize(jsonObject(links: .null), into: &buffer, replacing: "links") { buffer in
            JSONSerializer.serializeArray(links, into: &buffer, writeElement: writeLink)
        }
    }

    /// Every member, with `links` as given.
    private func jsonObject(links: JSONValue) -> JSONObject {
        [
            "id": .number(JSONNumber(id.rawValue)), "profile": .string(profile),
            "supportedRates": .array(supportedRates.map { JSONValue($0) }), "refreshRate": JSONValue(refreshRate),
            "reason": .string(reason), "caps": caps.jsonValue, "links": links,
            "decision": decision?.jsonValue ?? .null, "residency": .array(residency.map(\.jsonValue)),
            "uptime": uptime.map { JSONValue($0) } ?? .null,
            "panelRate": panelRate.map { JSONValue($0) } ?? .null, "panelDecision": panelDecision?.jsonValue ?? .null,
        ]
    }
}

/// `framerate.v1.Compositor/GetState` result: every display.
public struct CompositorState: Hashable, Sendable {
    /// Every display, default first.
    public var displays: [DisplayState]
    /// The clock the daemon runs on: `monotonic` (real time) or `virtual` (`framerated
    /// --clock virtual`); `nil` from a daemon that does not say.
    public var clock: String?
    /// The daemon's now when this state was taken, seconds on its clock (the virtual now
    /// on a virtual-clock daemon); `nil` from a daemon that does not say.
    public var now: Double?

    /// Builds a state.
    public init(displays: [DisplayState]) { self.displays = displays }

    /// Parses a result from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        let reader = try ParamReader(json, path: "result", allowed: nil)
        var displays: [DisplayState] = []
        for display in try reader.array("displays") ?? [] { displays.append(try DisplayState(json: display)) }
        self.displays = displays
        self.clock = try reader.string("clock")
        self.now = try reader.number("now")
    }

    /// The result object.
    public var jsonValue: JSONValue { .object(jsonObject(displays: .array(displays.map(\.jsonValue)))) }

    /// Appends the result object (exactly ``jsonValue``'s bytes), each link written by
    /// `writeLink` (see ``DisplayState/writeJSON(into:writeLink:)``).
    public func writeJSON(into buffer: inout ByteBuffer, writeLink: (LinkState, inout ByteBuffer) -> Void) {
        JSONSerializer.serialize(jsonObject(displays: .null), into: &buffer, replacing: "displays") { buffer in
            JSONSerializer.serializeArray(displays, into: &buffer) { display, buffer in
                display.writeJSON(into: &buffer, writeLink: writeLink)
            }
        }
    }

    /// Every member, with `displays` as given.
    private func jsonObject(displays: JSONValue) -> JSONObject {
        var object: JSONObject = ["displays": displays]
        if let clock { object["clock"] = .string(clock) }
        if let now { object["now"] = JSONValue(now) }
        return object
    }
}

/// `framerate.v1.Compositor/SetCaps` params: only the caps named change.
public struct SetCapsRequest: Hashable, Sendable {
    /// The display, or `nil` for every display.
    public var display: DisplayID?
    /// New Low Power Mode state, or `nil` to keep it.
    public var lowPowerMode: Bool?
    /// New Limit Frame Rate state, or `nil` to keep it.
    public var limitFrameRate: Bool?
    /// New thermal state, or `nil` to keep it.
    public var thermalState: ThermalState?

    /// Builds a request.
    public init(display: DisplayID? = nil, lowPowerMode: Bool? = nil, limitFrameRate: Bool? = nil, thermalState: ThermalState? = nil) {
        self.display = display
        self.lowPowerMode = lowPowerMode
        self.limitFrameRate = limitFrameRate
        self.thermalState = thermalState
    }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["display", "lowPowerMode", "limitFrameRate", "thermalState"])
        self.display = try reader.integer("display").map { DisplayID(rawValue: Int($0)) }
        self.lowPowerMode = try reader.bool("lowPowerMode")
        self.limitFrameRate = try reader.bool("limitFrameRate")
        self.thermalState = try readThermalState(reader)
    }

    /// Applies the named changes to `caps`.
    public func apply(to caps: inout DisplayCaps) {
        if let lowPowerMode { caps.lowPowerMode = lowPowerMode }
        if let limitFrameRate { caps.limitFrameRate = limitFrameRate }
        if let thermalState { caps.thermalState = thermalState }
    }

    /// The params object.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        if let display { object["display"] = .number(JSONNumber(display.rawValue)) }
        if let lowPowerMode { object["lowPowerMode"] = .bool(lowPowerMode) }
        if let limitFrameRate { object["limitFrameRate"] = .bool(limitFrameRate) }
        if let thermalState { object["thermalState"] = .string(thermalState.rawValue) }
        return .object(object)
    }
}

/// `framerate.v1.Compositor/SetCaps` result: each changed display's new caps.
public struct SetCapsResult: Hashable, Sendable {
    /// The displays changed, with their caps.
    public var displays: [(display: DisplayID, caps: DisplayCaps)]

    /// Builds a result.
    public init(displays: [(display: DisplayID, caps: DisplayCaps)]) { self.displays = displays }

    /// Parses a result from the daemon.
    public init(json: JSONValue) throws(RPCError) {
        let reader = try ParamReader(json, path: "result", allowed: nil)
        var displays: [(DisplayID, DisplayCaps)] = []
        for entry in try reader.array("displays") ?? [] {
            let entryReader = try ParamReader(entry, path: "result.displays", allowed: nil)
            displays.append((DisplayID(rawValue: Int(try entryReader.requiredInteger("display"))), try DisplayCaps(json: entry["caps"])))
        }
        self.displays = displays
    }

    /// `{"displays":[{"display":0,"caps":{…}}]}`.
    public var jsonValue: JSONValue {
        ["displays": .array(displays.map { ["display": .number(JSONNumber($0.display.rawValue)), "caps": $0.caps.jsonValue] })]
    }

    /// Equal when the same displays have the same caps.
    public static func == (lhs: SetCapsResult, rhs: SetCapsResult) -> Bool {
        lhs.displays.map(\.display) == rhs.displays.map(\.display) && lhs.displays.map(\.caps) == rhs.displays.map(\.caps)
    }

    /// Hashes the displays and caps.
    public func hash(into hasher: inout Hasher) {
        for (display, caps) in displays {
            hasher.combine(display)
            hasher.combine(caps)
        }
    }
}

/// A compositor event sent to watchers in `framerate.v1.Compositor/Event`.
public enum CompositorEvent: Hashable, Sendable {
    /// A display's refresh rate changed: from and to in Hz, the decision that took effect
    /// (without `pending`; `nil` from a daemon older than the `decision` object) and when
    /// the daemon reported it, seconds on `CLOCK_MONOTONIC` (within a moment of the vsync
    /// the change took effect at; `nil` from an older daemon).
    case refreshRateChanged(
        display: DisplayID, from: Double, to: Double, reason: String, decision: DecisionState? = nil, at: Double? = nil
    )
    /// A link was registered.
    case linkAdded(display: DisplayID, link: LinkState)
    /// A link ended: invalidated, its connection closed, or the daemon closed it.
    case linkRemoved(display: DisplayID, link: LinkID, reason: String)
    /// A link's range or paused flag changed.
    case linkUpdated(display: DisplayID, link: LinkState)
    /// A display's caps changed.
    case capsChanged(display: DisplayID, caps: DisplayCaps)

    /// The `kind` field.
    public var kind: String {
        switch self {
        case .refreshRateChanged: "refreshRateChanged"
        case .linkAdded: "linkAdded"
        case .linkRemoved: "linkRemoved"
        case .linkUpdated: "linkUpdated"
        case .capsChanged: "capsChanged"
        }
    }

    /// The notification params for watch `watch`: `watch`, then ``fields``.
    public func params(watch: UInt64) -> JSONValue {
        var object: JSONObject = ["watch": JSONValue(watch)]
        for member in fields { object.append(key: member.key, value: member.value) }
        return .object(object)
    }

    /// The params' members that every watch gets alike, in order: `kind` first, then the
    /// kind's own (everything but `watch`).
    var fields: JSONObject {
        var object: JSONObject = ["kind": .string(kind)]
        switch self {
        case .refreshRateChanged(let display, let from, let to, let reason, let decision, let at):
            object["display"] = .number(JSONNumber(display.rawValue))
            object["from"] = JSONValue(from)
            object["to"] = JSONValue(to)
            object["reason"] = .string(reason)
            if let decision { object["decision"] = decision.jsonValue }
            if let at { object["at"] = .wireTime(seconds: at) }
        case .linkAdded(let display, let link), .linkUpdated(let display, let link):
            object["display"] = .number(JSONNumber(display.rawValue))
            object["link"] = link.jsonValue
        case .linkRemoved(let display, let link, let reason):
            object["display"] = .number(JSONNumber(display.rawValue))
            object["link"] = JSONValue(link.rawValue)
            object["reason"] = .string(reason)
        case .capsChanged(let display, let caps):
            object["display"] = .number(JSONNumber(display.rawValue))
            object["caps"] = caps.jsonValue
        }
        return object
    }

    /// The kinds this version knows, in the order errors list them.
    public static let kinds = ["refreshRateChanged", "linkAdded", "linkRemoved", "linkUpdated", "capsChanged"]

    /// Parses an `Event` notification's params: the inverse of ``params(watch:)``.
    ///
    /// Fields other than those of the event's kind (including `watch`) are
    /// ignored, so a newer daemon may add some; a missing `reason` reads as `""`.
    /// - Throws: `-32602` naming the field when `kind` is missing or unknown (a
    ///   newer daemon's), or a field of the kind is missing or malformed.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: nil)
        guard let kind = try reader.string("kind") else {
            throw .invalidParams(field: "kind", "missing required field kind (a string)")
        }
        guard Self.kinds.contains(kind) else {
            throw .invalidParams(
                field: "kind", "unknown event kind \"\(EchoedValue.text(kind))\"; this client knows " + Self.kinds.joined(separator: ", ")
            )
        }
        let display = DisplayID(rawValue: Int(try reader.requiredInteger("display")))
        switch kind {
        case "refreshRateChanged":
            var decision: DecisionState?
            if let json = params?["decision"], !json.isNull { decision = try DecisionState(json: json) }
            self = .refreshRateChanged(
                display: display, from: try reader.requiredNumber("from"), to: try reader.requiredNumber("to"),
                reason: try reader.string("reason", maximumLength: 1 << 16) ?? "", decision: decision, at: try reader.number("at")
            )
        case "linkAdded", "linkUpdated":
            guard let json = params?["link"], !json.isNull else {
                throw .invalidParams(field: "link", "missing required field link (an object)")
            }
            let link = try LinkState(json: json)
            self = kind == "linkAdded" ? .linkAdded(display: display, link: link) : .linkUpdated(display: display, link: link)
        case "linkRemoved":
            self = .linkRemoved(
                display: display, link: LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1))),
                reason: try reader.string("reason", maximumLength: 1 << 16) ?? ""
            )
        default:  // "capsChanged"
            guard let caps = params?["caps"], !caps.isNull else {
                throw .invalidParams(field: "caps", "missing required field caps (an object)")
            }
            self = .capsChanged(display: display, caps: try DisplayCaps(json: caps))
        }
    }
}

/// `framerate.v1.Compositor/Unwatch` params.
public struct UnwatchRequest: Hashable, Sendable {
    /// The watch to end.
    public var watch: UInt64

    /// Builds a request.
    public init(watch: UInt64) { self.watch = watch }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["watch"])
        self.watch = UInt64(try reader.requiredInteger("watch", minimum: 1))
    }

    /// The params object.
    public var jsonValue: JSONValue { ["watch": JSONValue(watch)] }
}

/// `grpc.health.v1.Health/Check` params.
public struct HealthCheckRequest: Hashable, Sendable {
    /// The service to check; `nil` or empty means the whole daemon.
    public var service: String?

    /// Builds a request.
    public init(service: String? = nil) { self.service = service }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["service"])
        self.service = try reader.string("service")
    }

    /// The params object.
    public var jsonValue: JSONValue { service.map { ["service": .string($0)] } ?? [:] }
}

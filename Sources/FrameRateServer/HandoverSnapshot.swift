import FrameRateModel
import FrameRateProtocol

/// What a stopping daemon hands to the one systemd starts next, besides the sockets:
/// the compositor (``CompositorCheckpoint``), each connection's owner id, watches and
/// unhandled input, and the counters that keep ids unique.
///
/// Encoded as one compact JSON object (``encoded()``, ``init(decoding:)``) with a
/// ``format`` version: a daemon reads only its own format and otherwise falls back to
/// closing the handed-over connections. Durations are `[seconds, attoseconds]` pairs,
/// exact; instants are `CLOCK_MONOTONIC` nanoseconds (the same clock in both processes).
struct HandoverSnapshot: Hashable, Sendable {
    /// The format this daemon writes and reads. Bump it with any change of meaning.
    static let format: Int64 = 1
    /// The largest snapshot read back (bytes): a bound against a damaged file. Only the
    /// service's own main process can fill the store; a typical snapshot is a few hundred
    /// bytes per link and per connection, plus each connection's unhandled input (at most
    /// one read and one partial line, hex-encoded).
    static let maximumSize = 512 * 1024 * 1024

    /// The compositor's start (its displays' first vsync), `CLOCK_MONOTONIC` ns.
    var start: Int64
    /// When the snapshot was taken, `CLOCK_MONOTONIC` ns: the new daemon logs the gap.
    var takenAt: Int64
    /// Links, displays, sequences, caps.
    var compositor: CompositorCheckpoint
    /// Every handed-over connection.
    var sessions: [HandoverSession]
    /// The last watch id handed out.
    var lastWatch: UInt64
    /// The last connection generation handed out (the high half of owner ids).
    var ownerGeneration: UInt64

    /// Builds a snapshot.
    init(
        start: Int64, takenAt: Int64, compositor: CompositorCheckpoint, sessions: [HandoverSession], lastWatch: UInt64,
        ownerGeneration: UInt64
    ) {
        self.start = start
        self.takenAt = takenAt
        self.compositor = compositor
        self.sessions = sessions
        self.lastWatch = lastWatch
        self.ownerGeneration = ownerGeneration
    }

    // MARK: Encoding

    /// The snapshot as compact JSON bytes.
    func encoded() -> [UInt8] {
        let value: JSONValue = [
            "format": .number(JSONNumber(Self.format)),
            "start": .number(JSONNumber(start)),
            "takenAt": .number(JSONNumber(takenAt)),
            "lastWatch": .number(JSONNumber(lastWatch)),
            "ownerGeneration": .number(JSONNumber(ownerGeneration)),
            "lastLinkID": .number(JSONNumber(compositor.lastLinkID)),
            "displays": .array(compositor.displays.map(Self.encode)),
            "sessions": .array(
                sessions.map { session in
                    var object: JSONObject = [
                        "owner": .number(JSONNumber(session.owner.rawValue)),
                        "inode": .number(JSONNumber(session.inode)),
                        "watches": .array(session.watches.map { .number(JSONNumber($0)) }),
                        "pendingInput": .string(Hex.encode(session.pendingInput)),
                    ]
                    if let tickInode = session.tickInode { object["tickInode"] = .number(JSONNumber(tickInode)) }
                    return .object(object)
                }
            ),
        ]
        return JSONSerializer.bytes(value)
    }

    private static func encode(_ display: DisplayCheckpoint) -> JSONValue {
        [
            "id": .number(JSONNumber(display.id.rawValue)),
            "lowPowerMode": .bool(display.caps.lowPowerMode),
            "limitFrameRate": .bool(display.caps.limitFrameRate),
            "thermalState": .string(display.caps.thermalState.rawValue),
            "refreshRate": .number(JSONNumber(display.refreshRate)),
            "reason": .string(display.reason),
            "anchorIndex": .number(JSONNumber(display.anchorIndex)),
            "anchorTime": encode(display.anchorTime),
            "lastIndex": .number(JSONNumber(display.lastIndex)),
            "idleSince": display.idleSince.map(encode) ?? .null,
            "decreaseWantedSince": display.decreaseWantedSince.map(encode) ?? .null,
            "links": .array(display.links.map(encode)),
        ]
    }

    private static func encode(_ link: LinkCheckpoint) -> JSONValue {
        let range = link.configuration.range
        return [
            "id": .number(JSONNumber(link.link.rawValue)),
            "owner": .number(JSONNumber(link.owner.rawValue)),
            "minimum": .number(JSONNumber(range.minimum)),
            "maximum": .number(JSONNumber(range.maximum)),
            "preferred": .number(JSONNumber(range.preferred)),
            "paused": .bool(link.configuration.isPaused),
            "highFrameRate": .bool(link.configuration.hasHighFrameRateEntitlement),
            "adaptive": .bool(link.configuration.isAdaptive),
            "timelines": .number(JSONNumber(link.configuration.timelines)),
            "preferredFrameLatency": .number(JSONNumber(link.configuration.frameLatency)),
            "label": link.configuration.label.map { .string($0) } ?? .null,
            "since": encode(link.since),
            "sequence": .number(JSONNumber(link.pacing.sequence)),
            "pendingSkips": .number(JSONNumber(link.pacing.pendingSkips)),
            "lastDelivered": .number(JSONNumber(link.pacing.lastDelivered)),
            "lastFinished": .number(JSONNumber(link.pacing.lastFinished)),
            "reportsFrameDone": .bool(link.pacing.reportsFrameDone),
            "nextTarget": link.pacing.nextTarget.map(encode) ?? .null,
            "lastDeliveredTime": link.pacing.lastDeliveredTime.map(encode) ?? .null,
            "lastDeliveredInterval": link.pacing.lastDeliveredInterval.map(encode) ?? .null,
            "heldBackReported": .bool(link.pacing.heldBackReported),
        ]
    }

    private static func encode(_ duration: Duration) -> JSONValue {
        .array([.number(JSONNumber(duration.components.seconds)), .number(JSONNumber(duration.components.attoseconds))])
    }

    // MARK: Decoding

    /// Decodes a snapshot, checking the format version first and every field's type and range.
    init(decoding bytes: [UInt8]) throws(HandoverSnapshotError) {
        let value: JSONValue
        do {
            value = try JSONParser().parse(bytes)
        } catch {
            throw .unreadable("\(error)")
        }
        let root = SnapshotFields(value, path: "")
        let format = value["format"]?.int64Value
        guard format == Self.format else { throw .incompatibleFormat(found: format, expected: Self.format) }
        start = try root.int64("start")
        takenAt = try root.int64("takenAt")
        lastWatch = try root.uint64("lastWatch")
        ownerGeneration = try root.uint64("ownerGeneration")
        let displays = try root.array("displays").map { (fields) throws(HandoverSnapshotError) in try Self.display(fields) }
        compositor = CompositorCheckpoint(lastLinkID: try root.uint64("lastLinkID"), displays: displays)
        sessions = try root.array("sessions").map { (fields) throws(HandoverSnapshotError) in
            HandoverSession(
                owner: OwnerID(rawValue: try fields.uint64("owner")),
                inode: try fields.uint64("inode"),
                watches: try fields.array("watches").map { (watch) throws(HandoverSnapshotError) in try watch.asUInt64() },
                pendingInput: try Hex.decode(try fields.string("pendingInput")).orThrow(.malformed(field: fields.path("pendingInput"))),
                tickInode: try fields.optionalUInt64("tickInode")
            )
        }
    }

    private static func display(_ fields: SnapshotFields) throws(HandoverSnapshotError) -> DisplayCheckpoint {
        let thermal = try fields.string("thermalState")
        guard let thermalState = ThermalState(rawValue: thermal) else { throw .malformed(field: fields.path("thermalState")) }
        let id = try fields.int64("id")
        guard let displayID = Int(exactly: id) else { throw .malformed(field: fields.path("id")) }
        return DisplayCheckpoint(
            id: DisplayID(rawValue: displayID),
            caps: DisplayCaps(lowPowerMode: try fields.bool("lowPowerMode"), limitFrameRate: try fields.bool("limitFrameRate"), thermalState: thermalState),
            refreshRate: try fields.double("refreshRate"), reason: try fields.string("reason"),
            anchorIndex: try fields.uint64("anchorIndex"), anchorTime: try fields.duration("anchorTime"),
            lastIndex: try fields.uint64("lastIndex"), idleSince: try fields.optionalDuration("idleSince"),
            decreaseWantedSince: try fields.optionalDuration("decreaseWantedSince"),
            links: try fields.array("links").map { (link) throws(HandoverSnapshotError) in try Self.link(link) }
        )
    }

    private static func link(_ fields: SnapshotFields) throws(HandoverSnapshotError) -> LinkCheckpoint {
        let range: FrameRateRange
        do {
            range = try FrameRateRange(minimum: try fields.double("minimum"), maximum: try fields.double("maximum"), preferred: try fields.double("preferred"))
        } catch let error as HandoverSnapshotError {
            throw error
        } catch {
            throw .malformed(field: fields.path("minimum"))
        }
        return LinkCheckpoint(
            link: LinkID(rawValue: try fields.uint64("id")), owner: OwnerID(rawValue: try fields.uint64("owner")),
            configuration: try fields.withFrameTiming(
                DisplayLinkConfiguration(
                    range: range, isPaused: try fields.bool("paused"), hasHighFrameRateEntitlement: try fields.bool("highFrameRate"),
                    label: try fields.optionalString("label"), isAdaptive: try fields.bool("adaptive")
                )
            ),
            since: try fields.duration("since"),
            pacing: try fields.withDeliveryTimes(
                LinkPacingCheckpoint(
                    sequence: try fields.uint64("sequence"), pendingSkips: try fields.uint64("pendingSkips"),
                    lastDelivered: try fields.uint64("lastDelivered"), lastFinished: try fields.uint64("lastFinished"),
                    reportsFrameDone: try fields.bool("reportsFrameDone"), nextTarget: try fields.optionalDuration("nextTarget")
                ))
        )
    }
}

extension Optional {
    /// The value, or `error` thrown.
    fileprivate func orThrow(_ error: HandoverSnapshotError) throws(HandoverSnapshotError) -> Wrapped {
        guard let self else { throw error }
        return self
    }
}

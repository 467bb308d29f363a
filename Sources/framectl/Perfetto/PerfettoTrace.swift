import FrameRateModel
import FrameRateProtocol

/// Builds a Perfetto trace (`perfetto.protos.Trace`, the native protobuf format) from a
/// daemon's trace records: one track per display with vsync instants, a child counter
/// track of its refresh rate (Hz) and a child track of decisions (rule and reason as debug
/// annotations); one track per link, named after its pid, command and label, with one
/// slice per tick interval (`timestamp` → `targetTimestamp`), Present → Presented flows,
/// and a child track marking each hitch as a slice from the expected to the actual time.
///
/// Timestamps are `CLOCK_MONOTONIC` nanoseconds, declared as `BUILTIN_CLOCK_MONOTONIC` (3).
/// Field numbers are those of perfetto_trace.proto (checked by the test suite, which
/// decodes the file with Perfetto's published protos).
struct PerfettoTrace {
    /// `TracePacket` fields.
    private enum Packet {
        static let timestamp = 8, trackEvent = 11, trustedPacketSequenceID = 10, sequenceFlags = 13
        static let timestampClockID = 58, trackDescriptor = 60
    }
    /// `TrackDescriptor` fields.
    private enum Track { static let uuid = 1, name = 2, parentUUID = 5, counter = 8 }
    /// `CounterDescriptor.unit_name`.
    private static let counterUnitName = 6
    /// `TrackEvent` fields and types.
    private enum Event {
        static let debugAnnotations = 4, type = 9, trackUUID = 11, categories = 22, name = 23
        static let doubleCounterValue = 44, flowIDs = 47, terminatingFlowIDs = 48
        static let sliceBegin: UInt64 = 1, sliceEnd: UInt64 = 2, instant: UInt64 = 3, counter: UInt64 = 4
    }
    /// `DebugAnnotation` fields.
    private enum Annotation { static let boolValue = 2, uintValue = 3, intValue = 4, doubleValue = 5, stringValue = 6, name = 10 }
    private static let monotonicClock: UInt64 = 3
    private static let sequenceID: UInt64 = 1

    /// One annotation's value.
    enum Value {
        case string(String), double(Double), uint(UInt64), bool(Bool)
    }

    /// What the trace holds, for framectl's summary and the tests.
    struct Counts: Equatable {
        var ticks = 0, vsyncs = 0, rateChanges = 0, decisions = 0, presents = 0, presented = 0, hitches = 0, dropped = 0
    }

    private var descriptors: [[UInt8]] = []
    /// Event packets with their timestamp and insertion order (sorted on output).
    private var events: [(time: UInt64, order: Int, bytes: [UInt8])] = []
    private var knownTracks: Set<UInt64> = []
    private(set) var counts = Counts()

    /// Each link's last tick slice still open: its end and track.
    private var openSlices: [LinkID: (end: UInt64, track: UInt64)] = [:]
    /// Flows of Presents not yet Presented, by link and sequence (oldest first).
    private var pendingFlows: [LinkID: [(sequence: UInt64, flow: UInt64)]] = [:]
    private var lastFlow: UInt64 = 0
    /// Each display's rate last written to its counter.
    private var rates: [DisplayID: Double] = [:]
    /// Each link's display, from its link record or the initial state.
    private var linkDisplays: [LinkID: DisplayID] = [:]

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(FrameRateMath.wholeNumber((seconds * 1e9).rounded(), clampedTo: 0...Int64.max))
    }

    static func displayTrack(_ display: DisplayID) -> UInt64 { 1_000 + UInt64(clamping: display.rawValue) * 4 }
    static func rateTrack(_ display: DisplayID) -> UInt64 { displayTrack(display) + 1 }
    static func decisionTrack(_ display: DisplayID) -> UInt64 { displayTrack(display) + 2 }
    static func linkTrack(_ link: LinkID) -> UInt64 { 1 << 40 | link.rawValue << 1 }
    static func hitchTrack(_ link: LinkID) -> UInt64 { linkTrack(link) | 1 }

    /// Starts from the state the daemon answered `Trace` with (`at`: when, seconds).
    init(state: CompositorState, at: Double) {
        for display in state.displays {
            describe(display: display.id, profile: display.profile)
            setRate(display.id, display.refreshRate, at: Self.nanoseconds(at), isChange: false)
            for link in display.links { describe(link: link, display: display.id) }
        }
    }

    private mutating func descriptor(uuid: UInt64, name: String, parent: UInt64?, counterUnit: String? = nil) {
        guard knownTracks.insert(uuid).inserted else { return }
        var packet = ProtobufWriter()
        packet.uint(Packet.trustedPacketSequenceID, Self.sequenceID)
        packet.message(Packet.trackDescriptor) { track in
            track.uint(Track.uuid, uuid)
            track.string(Track.name, name)
            if let parent { track.uint(Track.parentUUID, parent) }
            if let counterUnit { track.message(Track.counter) { $0.string(Self.counterUnitName, counterUnit) } }
        }
        descriptors.append(packet.bytes)
    }

    private mutating func describe(display: DisplayID, profile: String) {
        let name = "display \(display.rawValue)" + (profile.isEmpty ? "" : " (\(profile))")
        descriptor(uuid: Self.displayTrack(display), name: name, parent: nil)
        descriptor(uuid: Self.rateTrack(display), name: "display \(display.rawValue) refresh rate (Hz)", parent: Self.displayTrack(display), counterUnit: "Hz")
        descriptor(uuid: Self.decisionTrack(display), name: "display \(display.rawValue) decisions", parent: Self.displayTrack(display))
    }

    private mutating func describe(link: LinkState, display: DisplayID) {
        linkDisplays[link.link] = display
        describe(display: display, profile: "")
        // Another user's link arrives without its holder (docs/protocol.md, Permissions).
        var name = link.peer.map { "pid \($0.pid) \($0.command ?? "?")" } ?? "another user's link"
        if let label = link.label { name += " '\(label)'" }
        name += " (link \(link.link.rawValue))"
        descriptor(uuid: Self.linkTrack(link.link), name: name, parent: Self.displayTrack(display))
        descriptor(uuid: Self.hitchTrack(link.link), name: "link \(link.link.rawValue) hitches", parent: Self.linkTrack(link.link))
    }

    /// A link the records name without having announced it (it existed before the trace
    /// and the initial state was cut short): a track named after its id alone.
    private mutating func ensure(link: LinkID, display: DisplayID) {
        guard !knownTracks.contains(Self.linkTrack(link)) else { return }
        linkDisplays[link] = display
        describe(display: display, profile: "")
        descriptor(uuid: Self.linkTrack(link), name: "link \(link.rawValue)", parent: Self.displayTrack(display))
        descriptor(uuid: Self.hitchTrack(link), name: "link \(link.rawValue) hitches", parent: Self.linkTrack(link))
    }

    private mutating func event(
        at time: UInt64, track: UInt64, type: UInt64, name: String? = nil, annotations: [(String, Value)] = [],
        counter: Double? = nil, flows: [UInt64] = [], terminatingFlows: [UInt64] = []
    ) {
        var packet = ProtobufWriter()
        packet.uint(Packet.timestamp, time)
        packet.uint(Packet.timestampClockID, Self.monotonicClock)
        packet.uint(Packet.trustedPacketSequenceID, Self.sequenceID)
        packet.message(Packet.trackEvent) { event in
            event.uint(Event.type, type)
            event.uint(Event.trackUUID, track)
            if let name { event.string(Event.name, name) }
            for (key, value) in annotations {
                event.message(Event.debugAnnotations) { annotation in
                    annotation.string(Annotation.name, key)
                    switch value {
                    case .string(let text): annotation.string(Annotation.stringValue, text)
                    case .double(let number): annotation.double(Annotation.doubleValue, number)
                    case .uint(let number): annotation.uint(Annotation.uintValue, number)
                    case .bool(let flag): annotation.bool(Annotation.boolValue, flag)
                    }
                }
            }
            if let counter { event.double(Event.doubleCounterValue, counter) }
            for flow in flows { event.fixed64(Event.flowIDs, flow) }
            for flow in terminatingFlows { event.fixed64(Event.terminatingFlowIDs, flow) }
        }
        events.append((time, events.count, packet.bytes))
    }

    private mutating func setRate(_ display: DisplayID, _ rate: Double, at time: UInt64, isChange: Bool) {
        rates[display] = rate
        if isChange { counts.rateChanges += 1 }
        event(at: time, track: Self.rateTrack(display), type: Event.counter, counter: rate)
    }

    private mutating func closeSlice(of link: LinkID, before time: UInt64) {
        guard let open = openSlices.removeValue(forKey: link) else { return }
        event(at: min(open.end, time), track: open.track, type: Event.sliceEnd)
    }

    /// Adds one record.
    mutating func add(_ record: TraceRecord) {
        switch record {
        case .vsync(let display, let at):
            counts.vsyncs += 1
            event(at: Self.nanoseconds(at), track: Self.displayTrack(display), type: Event.instant, name: "vsync")
        case .tick(let display, let link, let sequence, let timestamp, let target, let skipped, let refreshRate):
            ensure(link: link, display: display)
            counts.ticks += 1
            let begin = Self.nanoseconds(timestamp)
            closeSlice(of: link, before: begin)
            event(
                at: begin, track: Self.linkTrack(link), type: Event.sliceBegin, name: "tick \(sequence)",
                annotations: [("sequence", .uint(sequence)), ("skipped", .uint(skipped)), ("refreshRate", .double(refreshRate))]
            )
            openSlices[link] = (max(begin, Self.nanoseconds(target)), Self.linkTrack(link))
        case .rateChange(let display, let at, _, let to):
            setRate(display, to, at: Self.nanoseconds(at), isChange: true)
        case .decision(let display, let at, let rate, let rule, let reason, _):
            counts.decisions += 1
            event(
                at: Self.nanoseconds(at), track: Self.decisionTrack(display), type: Event.instant,
                name: "decision: \(FrameRateMath.format(rate)) Hz (\(rule))",
                annotations: [("rate", .double(rate)), ("rule", .string(rule)), ("reason", .string(reason))]
            )
        case .present(let display, let link, let sequence, let at):
            ensure(link: link, display: display)
            counts.presents += 1
            lastFlow += 1
            pendingFlows[link, default: []].append((sequence, lastFlow))
            event(
                at: Self.nanoseconds(at), track: Self.linkTrack(link), type: Event.instant, name: "Present \(sequence)",
                annotations: [("sequence", .uint(sequence))], flows: [lastFlow]
            )
        case .presented(let display, let frame):
            ensure(link: frame.link, display: display)
            counts.presented += 1
            var flows: [UInt64] = []
            if let index = pendingFlows[frame.link]?.firstIndex(where: { $0.sequence == frame.sequence }) {
                flows = [pendingFlows[frame.link]!.remove(at: index).flow]
            }
            let shown = frame.dropped ? Self.nanoseconds(frame.expectedTime) : Self.nanoseconds(frame.presentedTime)
            let hitchMilliseconds = frame.hitch * 1000
            if frame.dropped { counts.dropped += 1 }
            event(
                at: shown, track: Self.linkTrack(frame.link), type: Event.instant,
                name: frame.dropped ? "dropped \(frame.sequence)" : "Presented \(frame.sequence)",
                annotations: [
                    ("sequence", .uint(frame.sequence)), ("hitch_ms", .double(hitchMilliseconds)), ("dropped", .bool(frame.dropped)),
                ],
                terminatingFlows: flows
            )
            if !frame.dropped && frame.hitch > 0 {
                counts.hitches += 1
                let track = Self.hitchTrack(frame.link)
                event(
                    at: Self.nanoseconds(frame.expectedTime), track: track, type: Event.sliceBegin,
                    name: "hitch \((hitchMilliseconds * 10).rounded() / 10) ms (frame \(frame.sequence))",
                    annotations: [("hitch_ms", .double(hitchMilliseconds)), ("sequence", .uint(frame.sequence))]
                )
                event(at: shown, track: track, type: Event.sliceEnd)
            }
        case .linkAdded(let display, _, let link):
            describe(link: link, display: display)
        case .linkRemoved(_, let at, let link):
            closeSlice(of: link, before: Self.nanoseconds(at))
        }
    }

    /// The trace file: descriptors first, then the events in time order.
    mutating func encoded() -> [UInt8] {
        for link in Array(openSlices.keys) { closeSlice(of: link, before: .max) }
        var trace = ProtobufWriter()
        var first = ProtobufWriter()
        first.uint(Packet.trustedPacketSequenceID, Self.sequenceID)
        first.uint(Packet.sequenceFlags, 1)  // SEQ_INCREMENTAL_STATE_CLEARED
        trace.bytes(1, first.bytes)
        for descriptor in descriptors { trace.bytes(1, descriptor) }
        for event in events.sorted(by: { $0.time != $1.time ? $0.time < $1.time : $0.order < $1.order }) {
            trace.bytes(1, event.bytes)
        }
        return trace.bytes
    }
}

/// What `framerate.v1.Reflection/ListServices` answers: every service, its
/// methods, how each is called, and its parameter fields; and, with each method's
/// summary, result fields and error statuses, what `rpc.discover` answers as an
/// OpenRPC document (``OpenRPCDocument``). The one description of the v1 surface;
/// `docs/protocol.md` mirrors it.
///
/// A field's `type` is `base[ or null][ (unit or note)][: choice | choice]` with base
/// `number`, `integer`, `boolean`, `string`, `object` or `array`; a dotted name
/// (`range.minimum`) is a member of an object field, `name[].member` a member of the
/// objects of an array field (``FieldSchema`` turns them into JSON Schema).
public enum ServiceCatalog {
    /// How a method is used.
    public enum Kind: String, Sendable {
        /// A request with one response.
        case unary
        /// A request answered once, after which the daemon streams notifications.
        case serverStreaming = "server-streaming"
        /// A notification the daemon sends; never called by clients.
        case daemonNotification = "daemon-notification"
        /// A request or a notification from the client.
        case clientNotification = "unary-or-notification"
    }

    /// One parameter field.
    public struct Field: Sendable {
        /// Its name, e.g. `range.minimum`.
        public let name: String
        /// Its JSON type and unit, e.g. `number (Hz)`.
        public let type: String
        /// Whether it must be present.
        public let required: Bool
    }

    /// One method.
    public struct Method: Sendable {
        /// The full name.
        public let method: V1Method
        /// How it is used.
        public let kind: Kind
        /// Its parameter fields.
        public let params: [Field]
        /// For streaming methods, the notification they stream.
        public let streams: V1Method?
        /// What it does, in one sentence.
        public let summary: String
        /// Its result's fields (empty for `{}` and for daemon notifications).
        public let result: [Field]
        /// The gRPC statuses it fails with, besides INVALID_ARGUMENT for bad params.
        public let errors: [GRPCStatusCode]

        init(
            method: V1Method, kind: Kind, params: [Field], streams: V1Method?, summary: String,
            result: [Field] = [], errors: [GRPCStatusCode] = []
        ) {
            self.method = method
            self.kind = kind
            self.params = params
            self.streams = streams
            self.summary = summary
            self.result = result
            self.errors = errors
        }
    }

    private static func field(_ name: String, _ type: String, required: Bool = false) -> Field {
        Field(name: name, type: type, required: required)
    }

    private static let range: [Field] = [
        field("range.minimum", "number (Hz)", required: true), field("range.maximum", "number (Hz)", required: true),
        field("range.preferred", "number (Hz, 0 = none)"),
    ]

    private static let caps: [Field] = [
        field("caps", "object", required: true), field("caps.lowPowerMode", "boolean", required: true),
        field("caps.limitFrameRate", "boolean", required: true),
        field("caps.thermalState", "string: nominal | fair | serious | critical", required: true),
    ]

    private static func linkStatus(display: Bool) -> [Field] {
        [
            field("link", "integer", required: true), field("refreshRate", "number (Hz)", required: true),
            field("callbackRate", "number (Hz)", required: true),
            field("decision", "object or null (the display's decision: rate, rule, deciders, cap, limited, pending, reason)", required: true),
            field("limitedBy", "string or null (why the link gets less than it asked)", required: true),
            field("wanted", "number or null (Hz)", required: true), field("got", "number or null (Hz)", required: true),
            field("timelines", "integer (1...7)"), field("preferredFrameLatency", "integer (1 or 2)"),
        ] + (display ? [field("display", "integer", required: true)] : [])
    }

    private static let state: [Field] = [
        field("displays", "array", required: true), field("displays[].id", "integer", required: true),
        field("displays[].profile", "string", required: true), field("displays[].supportedRates", "array of number (Hz)", required: true),
        field("displays[].refreshRate", "number (Hz)", required: true), field("displays[].reason", "string", required: true),
        field("displays[].caps", "object", required: true), field("displays[].links", "array", required: true),
        field("displays[].decision", "object or null", required: true),
        field("displays[].residency", "array (time at each rate since the daemon started, and who held it there)", required: true),
        field("displays[].uptime", "number (s since the daemon started)", required: true),
        field("displays[].panelRate", "number (Hz; below refreshRate only while contentVelocity lowers the panel)", required: true),
        field("displays[].panelDecision", "object or null (the panel arbitration while contentVelocity is in play)", required: true),
        field("clock", "string (the daemon's clock): monotonic | virtual", required: true),
        field("now", "number (s, the daemon's clock: CLOCK_MONOTONIC, or the virtual now; when this state was taken)", required: true),
    ]

    private static let version: [Field] = [
        field("version", "string (the daemon's semantic version; framerated always sends it)"),
        field("commit", "string (the git commit it was built from, when known)"),
    ]

    /// Every method of protocol v1.
    public static let methods: [Method] = [
        Method(
            method: .register, kind: .serverStreaming,
            params: [field("range", "object", required: true)] + range + [
                field("display", "integer"), field("paused", "boolean"), field("label", "string"), field("highFrameRate", "boolean"),
                field("adaptive", "boolean"),
                field("timelines", "integer (1...7 frame timelines per tick; default 1)"),
                field("preferredFrameLatency", "integer (1 or 2 intervals; default 1)"),
            ],
            streams: .tick, summary: "Register a display link; its ticks follow as Tick notifications.",
            result: linkStatus(display: true), errors: [.notFound, .resourceExhausted, .unavailable]
        ),
        Method(
            method: .tick, kind: .daemonNotification,
            params: [
                field("link", "integer", required: true), field("sequence", "integer", required: true),
                field("timestamp", "number (s, CLOCK_MONOTONIC)", required: true),
                field("targetTimestamp", "number (s, CLOCK_MONOTONIC)", required: true),
                field("duration", "number (s)", required: true), field("refreshRate", "number (Hz)", required: true),
                field("callbackRate", "number (Hz)", required: true), field("skipped", "integer", required: true),
                field("boosted", "boolean (present and true only while boosted)"),
                field("targetPresentationTimestamp", "number (s, CLOCK_MONOTONIC; timestamp + preferredFrameLatency / callbackRate)", required: true),
                field("timelines", "array (only for a link with timelines > 1: its next frames, earliest first)"),
                field("timelines[].vsyncId", "integer (the display's vsync index of presentationTime)"),
                field("timelines[].deadline", "number (s, CLOCK_MONOTONIC)"),
                field("timelines[].presentationTime", "number (s, CLOCK_MONOTONIC)"),
            ],
            streams: nil, summary: "One delivered tick of a link (sent by the daemon)."
        ),
        Method(
            method: .update, kind: .unary,
            params: [field("link", "integer", required: true), field("range", "object")] + range + [field("paused", "boolean"), field("adaptive", "boolean")]
                + [field("timelines", "integer (1...7)"), field("preferredFrameLatency", "integer (1 or 2)")],
            streams: nil, summary: "Change a link's range, paused flag and/or adaptive pacing.", result: linkStatus(display: false),
            errors: [.notFound, .unavailable]
        ),
        Method(
            method: .boost, kind: .unary,
            params: [field("link", "integer", required: true), field("duration", "number (s, 0 < duration <= 5)", required: true),
                field("range", "object")] + range.map { field($0.name, $0.type) },
            streams: nil,
            summary: "Boost a link for a while: it votes a higher range (default its maximum) until the boost ends; a later Boost only moves the end later.",
            result: linkStatus(display: false) + [field("boostedUntil", "number (s, CLOCK_MONOTONIC)", required: true)],
            errors: [.notFound, .invalidArgument, .unavailable]
        ),
        Method(
            method: .invalidate, kind: .unary, params: [field("link", "integer", required: true)], streams: nil,
            summary: "Remove a link.", errors: [.notFound, .unavailable]
        ),
        Method(
            method: .frameDone, kind: .clientNotification,
            params: [field("link", "integer", required: true), field("sequence", "integer", required: true),
                field("contentVelocity", "number (points/s, finite, >= 0)")], streams: nil,
            summary: "The client finished the frame for a tick (usually sent as a notification); contentVelocity steers the panel rate.",
            errors: [.notFound, .invalidArgument, .unavailable]
        ),
        Method(
            method: .present, kind: .clientNotification,
            params: [
                field("link", "integer", required: true), field("sequence", "integer", required: true),
                field("at", "number (s, CLOCK_MONOTONIC)"), field("afterMinimumDuration", "number (s)"),
                field("vsyncId", "integer (a timelines entry's vsyncId: aim at that frame)"),
                field("contentVelocity", "number (points/s, finite, >= 0)"),
            ],
            streams: nil,
            summary: "The frame for a tick is committed now; shown at the first vsync at or after the latest of now, at and the previous frame plus afterMinimumDuration (usually a notification; counts as FrameDone).",
            errors: [.notFound, .invalidArgument, .unavailable]
        ),
        Method(
            method: .presented, kind: .daemonNotification,
            params: [
                field("link", "integer", required: true), field("sequence", "integer", required: true),
                field("presentedTime", "number (s, CLOCK_MONOTONIC; 0 = dropped)", required: true),
                field("expectedTime", "number (s, CLOCK_MONOTONIC)", required: true),
                field("hitch", "number (s)", required: true), field("dropped", "boolean", required: true),
            ],
            streams: nil, summary: "When a presented frame was shown, or that it was dropped, and its hitch (sent by the daemon)."
        ),
        Method(
            method: .closed, kind: .daemonNotification,
            params: [field("link", "integer", required: true), field("status", "string", required: true), field("message", "string", required: true)],
            streams: nil, summary: "The daemon ended a link (sent by the daemon), with a gRPC status and why."
        ),
        Method(
            method: .getState, kind: .unary, params: [], streams: nil,
            summary: "Every display, its rate, reason, decision, caps and links.", result: state,
            errors: [.resourceExhausted, .unavailable]
        ),
        Method(
            method: .setCaps, kind: .unary,
            params: [
                field("display", "integer"), field("lowPowerMode", "boolean"), field("limitFrameRate", "boolean"),
                field("thermalState", "string: nominal | fair | serious | critical"),
            ],
            streams: nil, summary: "Change power and thermal caps (root, the daemon's user and framerated-admin only).",
            result: [field("displays", "array", required: true), field("displays[].display", "integer", required: true)]
                + caps.map { field("displays[]." + $0.name, $0.type, required: true) },
            errors: [.notFound, .permissionDenied, .unavailable]
        ),
        Method(
            method: .watch, kind: .serverStreaming, params: [], streams: .event,
            summary: "Subscribe to compositor events; the reply holds the whole state, Event notifications follow.",
            result: [field("watch", "integer", required: true), field("state", "object", required: true)]
                + state.map { field("state." + $0.name, $0.type, required: true) },
            errors: [.resourceExhausted, .unavailable]
        ),
        Method(
            method: .event, kind: .daemonNotification,
            params: [field("watch", "integer", required: true), field("kind", "string", required: true)], streams: nil,
            summary: "One compositor event for a watch (sent by the daemon)."
        ),
        Method(
            method: .unwatch, kind: .unary, params: [field("watch", "integer", required: true)], streams: nil,
            summary: "End a watch.", errors: [.notFound, .unavailable]
        ),
        Method(
            method: .openTickSocket, kind: .unary, params: [], streams: nil,
            summary: "Before this connection's first Register: a token with which a second connection becomes its tick socket (Attach); Tick and Presented lines then go there, never here.",
            result: [field("token", "string (32 lowercase hexadecimal digits)", required: true)],
            errors: [.failedPrecondition, .unavailable]
        ),
        Method(
            method: .attachTickSocket, kind: .unary, params: [field("token", "string (from Open)", required: true)], streams: nil,
            summary: "As a new connection's first request: become the tick socket of the connection whose Open returned token. After the reply the daemon writes that connection's Tick and Presented lines here and reads nothing more.",
            result: [field("attached", "boolean", required: true)],
            errors: [.notFound, .failedPrecondition, .resourceExhausted, .unavailable]
        ),
        Method(
            method: .advance, kind: .unary,
            params: [field("seconds", "number (s of virtual time, 0 to 86400)", required: true)], streams: nil,
            summary: "Move a virtual-clock daemon's time on (framerated --clock virtual) while no unpaused link ticks; every instant due on the way is processed in order.",
            result: [field("now", "number (s, the virtual now once the advance is done)", required: true)],
            errors: [.failedPrecondition, .outOfRange, .unavailable]
        ),
        Method(
            method: .healthCheck, kind: .unary, params: [field("service", "string")], streams: nil,
            summary: "gRPC health check: SERVING while the daemon runs, with its version.",
            result: [field("status", "string: SERVING | NOT_SERVING", required: true)] + version, errors: [.notFound]
        ),
        Method(
            method: .listServices, kind: .unary, params: [], streams: nil,
            summary: "Every service, method and parameter, with the daemon's version.",
            result: [field("services", "array", required: true)] + version, errors: [.unavailable]
        ),
        Method(
            method: .trace, kind: .serverStreaming, params: [], streams: .traceRecords,
            summary: "Record what the daemon does (vsyncs, rate changes, decisions, ticks, presents) for framectl trace; TraceRecords notifications follow until StopTrace.",
            result: [field("trace", "integer", required: true), field("state", "object", required: true)],
            errors: [.resourceExhausted, .unavailable]
        ),
        Method(
            method: .traceRecords, kind: .daemonNotification,
            params: [
                field("trace", "integer", required: true), field("records", "array", required: true),
                field("lost", "integer", required: true),
            ],
            streams: nil, summary: "A batch of a trace's records, about every 100 ms (sent by the daemon)."
        ),
        Method(
            method: .stopTrace, kind: .unary, params: [field("trace", "integer", required: true)], streams: nil,
            summary: "End a trace.", errors: [.notFound, .unavailable]
        ),
    ]

    /// The service names, in first-appearance order.
    public static var services: [String] {
        var seen: [String] = []
        for method in methods where !seen.contains(method.method.service) { seen.append(method.method.service) }
        return seen
    }

    /// The `ListServices` result: ``jsonValue`` and the daemon's `version` and `commit`
    /// (none when `version` is `nil`).
    public static func listServicesResult(version: DaemonVersion?) -> JSONValue {
        guard case .object(var object) = jsonValue else { return jsonValue }
        for member in version?.members ?? [:] { object[member.key] = member.value }
        return .object(object)
    }

    /// The catalog: `{"services":[{"name":…,"methods":[{"name":…,"fullName":…,"kind":…,"params":[…]}]}]}`.
    public static var jsonValue: JSONValue {
        .object([
            "services": .array(
                services.map { service in
                    .object([
                        "name": .string(service),
                        "methods": .array(
                            methods.filter { $0.method.service == service }.map { method in
                                var object: JSONObject = [
                                    "name": .string(method.method.method), "fullName": .string(method.method.rawValue),
                                    "kind": .string(method.kind.rawValue),
                                    "params": .array(
                                        method.params.map {
                                            ["name": .string($0.name), "type": .string($0.type), "required": .bool($0.required)]
                                        }
                                    ),
                                ]
                                if let streams = method.streams { object["streams"] = .string(streams.rawValue) }
                                return .object(object)
                            }
                        ),
                    ])
                }
            )
        ])
    }
}

/// What `framerate.v1.Reflection/ListServices` answers: every service, its
/// methods, how each is called, and its parameter fields. The one description
/// of the v1 surface; `docs/protocol.md` mirrors it.
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
    }

    private static func field(_ name: String, _ type: String, required: Bool = false) -> Field {
        Field(name: name, type: type, required: required)
    }

    private static let range: [Field] = [
        field("range.minimum", "number (Hz)", required: true), field("range.maximum", "number (Hz)", required: true),
        field("range.preferred", "number (Hz, 0 = none)"),
    ]

    /// Every method of protocol v1.
    public static let methods: [Method] = [
        Method(
            method: .register, kind: .serverStreaming,
            params: [field("range", "object", required: true)] + range + [
                field("display", "integer"), field("paused", "boolean"), field("label", "string"), field("highFrameRate", "boolean"),
                field("adaptive", "boolean"),
            ],
            streams: .tick
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
            ],
            streams: nil
        ),
        Method(
            method: .update, kind: .unary,
            params: [field("link", "integer", required: true), field("range", "object")] + range + [field("paused", "boolean"), field("adaptive", "boolean")],
            streams: nil
        ),
        Method(
            method: .boost, kind: .unary,
            params: [field("link", "integer", required: true), field("duration", "number (s, 0 < duration <= 5)", required: true),
                field("range", "object")] + range.map { field($0.name, $0.type) },
            streams: nil
        ),
        Method(method: .invalidate, kind: .unary, params: [field("link", "integer", required: true)], streams: nil),
        Method(
            method: .frameDone, kind: .clientNotification,
            params: [field("link", "integer", required: true), field("sequence", "integer", required: true)], streams: nil
        ),
        Method(
            method: .closed, kind: .daemonNotification,
            params: [field("link", "integer", required: true), field("status", "string", required: true), field("message", "string", required: true)],
            streams: nil
        ),
        Method(method: .getState, kind: .unary, params: [], streams: nil),
        Method(
            method: .setCaps, kind: .unary,
            params: [
                field("display", "integer"), field("lowPowerMode", "boolean"), field("limitFrameRate", "boolean"),
                field("thermalState", "string: nominal | fair | serious | critical"),
            ],
            streams: nil
        ),
        Method(method: .watch, kind: .serverStreaming, params: [], streams: .event),
        Method(
            method: .event, kind: .daemonNotification,
            params: [field("watch", "integer", required: true), field("kind", "string", required: true)], streams: nil
        ),
        Method(method: .unwatch, kind: .unary, params: [field("watch", "integer", required: true)], streams: nil),
        Method(method: .healthCheck, kind: .unary, params: [field("service", "string")], streams: nil),
        Method(method: .listServices, kind: .unary, params: [], streams: nil),
    ]

    /// The service names, in first-appearance order.
    public static var services: [String] {
        var seen: [String] = []
        for method in methods where !seen.contains(method.method.service) { seen.append(method.method.service) }
        return seen
    }

    /// The `ListServices` result: `{"services":[{"name":…,"methods":[{"name":…,"fullName":…,"kind":…,"params":[…]}]}]}`.
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

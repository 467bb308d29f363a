public import FrameRateModel
public import FrameRateProtocol

/// One `framerate.v1.Compositor/Event` notification for a watch: the raw
/// params, plus the typed event when this client knows its `kind`.
public struct CompositorWatchEvent: Hashable, Sendable {
    /// The watch it belongs to.
    public var watch: UInt64
    /// The `kind` field, e.g. `refreshRateChanged` (empty when missing).
    public var kind: String
    /// The display it concerns, when it names one.
    public var display: DisplayID?
    /// The typed event, or `nil` for a kind this client does not know (a newer
    /// daemon) or a malformed one; ``params`` always has everything.
    public var event: CompositorEvent?
    /// The notification's params exactly as received.
    public var params: JSONValue

    /// Reads an event from the notification's params; the typed ``event`` is
    /// decoded by `CompositorEvent(params:)`, the one rule for reading events.
    public init(watch: UInt64, params: JSONValue) {
        self.watch = watch
        self.kind = params["kind"]?.stringValue ?? ""
        self.display = params["display"]?.int64Value.flatMap { Int(exactly: $0) }.map(DisplayID.init(rawValue:))
        self.event = try? CompositorEvent(params: params)
        self.params = params
    }

    /// The ``kind`` of the synthetic event a reconnecting connection puts on a
    /// watch's stream when it has started the watch again on a new connection:
    /// events of the outage are lost, and its ``params`` carry the new daemon's
    /// full state under `state` (the `Compositor/GetState` shape), to
    /// resynchronise from. Its ``event`` is `nil`.
    public static let resynchronizedKind = "resynchronized"

    /// The state in a ``resynchronizedKind`` event, else `nil`.
    public var resynchronizedState: CompositorState? {
        guard kind == Self.resynchronizedKind, let state = params["state"] else { return nil }
        return try? CompositorState(json: state)
    }
}

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

    /// Reads an event from the notification's params.
    public init(watch: UInt64, params: JSONValue) {
        self.watch = watch
        self.kind = params["kind"]?.stringValue ?? ""
        self.display = params["display"]?.int64Value.flatMap { Int(exactly: $0) }.map(DisplayID.init(rawValue:))
        self.event = Self.decode(kind: kind, display: display, params: params)
        self.params = params
    }

    private static func decode(kind: String, display: DisplayID?, params: JSONValue) -> CompositorEvent? {
        guard let display else { return nil }
        switch kind {
        case "refreshRateChanged":
            guard let from = params["from"]?.numberValue?.finiteDoubleValue, let to = params["to"]?.numberValue?.finiteDoubleValue
            else { return nil }
            return .refreshRateChanged(display: display, from: from, to: to, reason: params["reason"]?.stringValue ?? "")
        case "linkAdded", "linkUpdated":
            guard let json = params["link"], let link = try? LinkState(json: json) else { return nil }
            return kind == "linkAdded" ? .linkAdded(display: display, link: link) : .linkUpdated(display: display, link: link)
        case "linkRemoved":
            guard let id = params["link"]?.int64Value, id > 0 else { return nil }
            return .linkRemoved(display: display, link: LinkID(rawValue: UInt64(id)), reason: params["reason"]?.stringValue ?? "")
        case "capsChanged":
            guard let caps = try? DisplayCaps(json: params["caps"]) else { return nil }
            return .capsChanged(display: display, caps: caps)
        default:
            return nil
        }
    }
}

/// Every method and notification of protocol v1, by its gRPC-style name
/// `package.Service/Method`.
public enum V1Method: String, CaseIterable, Sendable {
    /// Request: register a display link.
    case register = "framerate.v1.DisplayLink/Register"
    /// Notification from the daemon: one delivered tick.
    case tick = "framerate.v1.DisplayLink/Tick"
    /// Request: change a link's range and/or paused flag.
    case update = "framerate.v1.DisplayLink/Update"
    /// Request: remove a link.
    case invalidate = "framerate.v1.DisplayLink/Invalidate"
    /// Request or notification: the client finished the frame for a tick.
    case frameDone = "framerate.v1.DisplayLink/FrameDone"
    /// Request or notification: the frame for a tick is committed; show it at the next vsync allowed.
    case present = "framerate.v1.DisplayLink/Present"
    /// Notification from the daemon: what became of one `Present` (shown at a vsync, or dropped).
    case presented = "framerate.v1.DisplayLink/Presented"
    /// Request: boost a link for a while (it votes a higher range until the boost ends).
    case boost = "framerate.v1.DisplayLink/Boost"
    /// Notification from the daemon: the daemon ended a link.
    case closed = "framerate.v1.DisplayLink/Closed"
    /// Request: every display, its rate, reason, caps and links.
    case getState = "framerate.v1.Compositor/GetState"
    /// Request (privileged): change power and thermal caps.
    case setCaps = "framerate.v1.Compositor/SetCaps"
    /// Request: subscribe to compositor events.
    case watch = "framerate.v1.Compositor/Watch"
    /// Notification from the daemon: one compositor event for a watch.
    case event = "framerate.v1.Compositor/Event"
    /// Request: end a watch.
    case unwatch = "framerate.v1.Compositor/Unwatch"
    /// Request: start recording what the daemon does; `TraceRecords` notifications follow.
    case trace = "framerate.v1.Compositor/Trace"
    /// Notification from the daemon: a batch of a trace's records.
    case traceRecords = "framerate.v1.Compositor/TraceRecords"
    /// Request: stop a trace.
    case stopTrace = "framerate.v1.Compositor/StopTrace"
    /// Request: move a virtual-clock daemon's time on (`framerated --clock virtual`).
    case advance = "framerate.v1.Compositor/Advance"
    /// Request: make a token for a second connection to become this one's tick socket.
    case openTickSocket = "framerate.v1.TickSocket/Open"
    /// Request, a new connection's first: become the tick socket of the connection whose
    /// `Open` returned the token (the daemon then writes ticks to it and never reads it).
    case attachTickSocket = "framerate.v1.TickSocket/Attach"
    /// Request: gRPC health check.
    case healthCheck = "grpc.health.v1.Health/Check"
    /// Request: list every service, method and parameter.
    case listServices = "framerate.v1.Reflection/ListServices"

    /// The service part of the name, e.g. `framerate.v1.DisplayLink`.
    public var service: String { String(rawValue.split(separator: "/")[0]) }
    /// The method part of the name, e.g. `Register`.
    public var method: String { String(rawValue.split(separator: "/")[1]) }
}

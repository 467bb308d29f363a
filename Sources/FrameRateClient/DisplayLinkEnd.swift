public import FrameRateProtocol

/// How a display link ended; after it ends its tick stream is finished.
public enum DisplayLinkEnd: Hashable, Sendable, CustomStringConvertible {
    /// This client invalidated it.
    case invalidated
    /// The daemon ended it with a `framerate.v1.DisplayLink/Closed` notification
    /// (e.g. `UNAVAILABLE` at shutdown).
    case closedByDaemon(LinkClosedNotification)
    /// The connection closed, which releases every link on it.
    case connectionClosed

    /// The gRPC status that ended the link: `OK` when invalidated, the daemon's
    /// status when it closed the link, `UNAVAILABLE` when the connection closed.
    public var status: GRPCStatusCode {
        switch self {
        case .invalidated: .ok
        case .closedByDaemon(let notification): notification.status
        case .connectionClosed: .unavailable
        }
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .invalidated:
            "invalidated by this client"
        case .closedByDaemon(let notification):
            "closed by the daemon (\(notification.status.name)): \(notification.message)"
        case .connectionClosed:
            "the connection to the daemon closed"
        }
    }
}

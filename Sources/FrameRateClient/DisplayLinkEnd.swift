public import FrameRateProtocol

/// How a display link ended; after it ends its tick stream is finished.
public enum DisplayLinkEnd: Hashable, Sendable, CustomStringConvertible {
    /// This client invalidated it.
    case invalidated
    /// The daemon ended it with a `framerate.v1.DisplayLink/Closed` notification
    /// (e.g. `UNAVAILABLE` at shutdown).
    case closedByDaemon(LinkClosedNotification)
    /// The connection closed, which releases every link on it. (A connection
    /// made with `reconnect:` only ends its links this way when it is closed for
    /// good, or gives up after ``ReconnectPolicy/maximumAttempts``.)
    case connectionClosed
    /// After a reconnect, the daemon refused to register the link again (e.g.
    /// its display no longer exists); the error is the daemon's answer.
    case reregistrationFailed(FrameRateClientError)

    /// The gRPC status that ended the link: `OK` when invalidated, the daemon's
    /// status when it closed the link or refused to register it again,
    /// `UNAVAILABLE` when the connection closed.
    public var status: GRPCStatusCode {
        switch self {
        case .invalidated: .ok
        case .closedByDaemon(let notification): notification.status
        case .connectionClosed: .unavailable
        case .reregistrationFailed(let error): error.status
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
        case .reregistrationFailed(let error):
            "refused by the daemon when registered again after a reconnect: \(error.message)"
        }
    }
}

import FrameRateProtocol

/// A stream a call starts when it succeeds: Register starts a link's ticks,
/// Watch a watch's events. The router installs it when the response arrives,
/// before it reads the next line, so no early notification is lost.
///
/// A route made to register a link (or watch) again after a reconnect is
/// `restoring`: when that call fails the stream stays open, since the link
/// lives on and is retried (or ended with the daemon's error) by the connection.
enum StreamRoute: Sendable {
    /// A display link's ticks.
    case link(LinkRecord, restoring: Bool)
    /// A compositor watch's events.
    case watch(WatchRecord, restoring: Bool)

    /// Whether the link or watch has already ended.
    var hasEnded: Bool {
        switch self {
        case .link(let record, _): record.snapshot.end != nil
        case .watch(let record, _): record.snapshot.ended
        }
    }

    /// Ends the stream without it ever having been routed (the call failed or
    /// was abandoned); nothing for a restoring route.
    func finishUnused() {
        switch self {
        case .link(let record, false): record.finish(end: .connectionClosed)
        case .watch(let record, false): record.finish()
        case .link(_, true), .watch(_, true): break
        }
    }
}

import FrameRateProtocol

/// A stream a call starts when it succeeds: Register starts a link's ticks,
/// Watch a watch's events. The router installs it when the response arrives,
/// before it reads the next line, so no early notification is lost.
enum StreamRoute: Sendable {
    /// A display link's ticks.
    case link(LinkRoute)
    /// A compositor watch's events.
    case watch(AsyncStream<CompositorWatchEvent>.Continuation)

    /// Ends the stream without it ever having been routed (the call failed or was abandoned).
    func finishUnused() {
        switch self {
        case .link(let route): route.finish(end: .connectionClosed)
        case .watch(let continuation): continuation.finish()
        }
    }
}

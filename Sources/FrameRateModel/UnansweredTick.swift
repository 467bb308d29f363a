/// A delivered tick the client has not answered yet (with `FrameDone` or `Present`).
public struct UnansweredTick: Hashable, Sendable {
    /// The link the tick went to.
    public let link: LinkID
    /// The link's latest interval (delivered, or skipped because the client was still
    /// busy with an earlier tick): a new interval of a silent link is a new wait.
    public let interval: UInt64

    /// Builds one.
    public init(link: LinkID, interval: UInt64) {
        self.link = link
        self.interval = interval
    }
}

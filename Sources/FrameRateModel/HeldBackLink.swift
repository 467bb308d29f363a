/// A link the daemon has held back for ``LinkPacer/heldBackReportAfter`` (1 s) because
/// its client has not answered its latest tick (``AwaitedFrame``): reported once per wait
/// in the vsync report, so that the daemon can say why the link gets no ticks.
public struct HeldBackLink: Hashable, Sendable {
    /// The link.
    public let link: LinkID
    /// Its owner (the connection).
    public let owner: OwnerID
    /// The frame it waits for.
    public let frame: AwaitedFrame
    /// How long it had waited at the vsync that reported it, since that tick's timestamp.
    public let waited: Duration
}

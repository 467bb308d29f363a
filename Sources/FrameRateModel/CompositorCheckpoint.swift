/// The whole compositor at a handover, as plain values: what a daemon hands to the one
/// that replaces it (``Compositor/checkpoint`` and ``Compositor/init(restoring:displays:governor:start:)``).
///
/// Instants are stored as durations since the compositor's start, so a checkpoint does
/// not depend on the clock type; the caller keeps the start instant (on
/// `CLOCK_MONOTONIC`, which both processes share).
public struct CompositorCheckpoint: Hashable, Sendable {
    /// The highest link id handed out so far (new links continue after it).
    public var lastLinkID: UInt64
    /// Every display, in configuration order.
    public var displays: [DisplayCheckpoint]

    /// Builds a checkpoint.
    public init(lastLinkID: UInt64, displays: [DisplayCheckpoint]) {
        self.lastLinkID = lastLinkID
        self.displays = displays
    }

    /// Every owner holding at least one link.
    public var owners: Set<OwnerID> {
        Set(displays.flatMap { $0.links.map(\.owner) })
    }
}

import FrameRateProtocol

/// Where the router delivers one display link's notifications.
struct LinkRoute: Sendable {
    /// The link's tick stream.
    let ticks: AsyncStream<TickNotification>.Continuation
    /// The link's record, which learns how the link ended.
    let record: LinkRecord

    /// Records `end` and finishes the tick stream.
    func finish(end: DisplayLinkEnd) {
        record.didEnd(end)
        ticks.finish()
    }
}

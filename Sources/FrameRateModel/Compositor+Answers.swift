extension Compositor {
    /// Every unpaused link whose latest delivered tick the client has not answered with
    /// `FrameDone` or `Present`, in display and registration order: what a virtual clock
    /// waits for before it moves to the next vsync. Costs O(links).
    public var unansweredTicks: [UnansweredTick] {
        var unanswered: [UnansweredTick] = []
        for display in displays {
            for link in display.links where !link.configuration.isPaused && link.pacer.lastFinished < link.pacer.lastDelivered {
                unanswered.append(UnansweredTick(link: link.id, interval: link.pacer.sequence))
            }
        }
        return unanswered
    }

    /// Whether any display has an unpaused link (one that ticks). O(displays).
    public var hasUnpausedLink: Bool {
        displays.contains { $0.hasTickingLink }
    }
}

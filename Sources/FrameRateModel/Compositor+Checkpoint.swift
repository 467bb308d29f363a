extension Compositor {
    /// Everything a daemon that takes over needs to continue exactly where this one
    /// stops: links with their ids, owners, ranges and sequence numbers, caps, each
    /// display's rate, governor timers and vsync grid. Instants are durations since ``start``.
    public var checkpoint: CompositorCheckpoint {
        CompositorCheckpoint(lastLinkID: lastLinkID, displays: displays.map(\.checkpoint))
    }

    /// A compositor that continues from `checkpoint`, with `configurations` (which must
    /// name the same displays, in the same order) and the original `start`.
    ///
    /// The first ``vsync(of:at:canDeliver:)`` after the handover reports the vsyncs the
    /// handover missed, and each link's next tick reports its missed intervals in `skipped`.
    /// - Throws: ``CheckpointMismatch`` when the displays differ or the checkpoint is inconsistent.
    public init(
        restoring checkpoint: CompositorCheckpoint, displays configurations: [DisplayConfiguration],
        governor: RefreshRateGovernor<C>.Settings = .init(), start: C.Instant
    ) throws(CheckpointMismatch) {
        guard configurations.map(\.id) == checkpoint.displays.map(\.id) else {
            throw CheckpointMismatch(
                "the snapshot has displays \(checkpoint.displays.map { String($0.id.rawValue) }.joined(separator: ", ")); "
                    + "this daemon is configured with \(configurations.map { String($0.id.rawValue) }.joined(separator: ", "))"
            )
        }
        var displays: [Display<C>] = []
        for (configuration, display) in zip(configurations, checkpoint.displays) {
            displays.append(try Display(configuration: configuration, governor: governor, start: start, restoring: display))
        }
        var displayOfLink: [LinkID: Int] = [:]
        var linksOfOwner: [OwnerID: [LinkID]] = [:]
        for (index, display) in checkpoint.displays.enumerated() {
            for link in display.links {
                guard link.link.rawValue <= checkpoint.lastLinkID, link.link.rawValue > 0 else {
                    throw CheckpointMismatch("\(link.link) is outside the ids handed out (1...\(checkpoint.lastLinkID))")
                }
                guard displayOfLink.updateValue(index, forKey: link.link) == nil else {
                    throw CheckpointMismatch("\(link.link) is on two displays")
                }
                linksOfOwner[link.owner, default: []].append(link.link)
            }
        }
        self.displays = displays
        self.displayOfLink = displayOfLink
        // Registration order is id order.
        self.linksOfOwner = linksOfOwner.mapValues { $0.sorted() }
        self.lastLinkID = checkpoint.lastLinkID
    }
}

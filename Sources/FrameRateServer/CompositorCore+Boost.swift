import FrameRateModel
import FrameRateProtocol
import Logging
import FrameRatePosix

extension CompositorCore {
    /// `DisplayLink/Boost`: the link votes a higher range until the boost ends.
    ///
    /// Any connection of the link owner's user (or a privileged one) may boost it, so
    /// `framectl boost LINK` can try a boost by hand on another process's link; another
    /// user's link is `NOT_FOUND`, as if it did not exist.
    func boost(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try BoostRequest(params: params)
        let at = now()
        let owner = try boostOwner(of: request.link, session: session)
        let (result, start) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                (
                    try state.compositor.boost(
                        link: request.link, owner: owner, duration: request.durationValue, range: request.range, at: at
                    ),
                    state.compositor.start
                )
            }
        }
        logger.debug(
            "link \(request.link.rawValue) boosted until \(result.boostedUntil.seconds)",
            metadata: ["event": "link-boosted", "link": "\(request.link.rawValue)", "duration": "\(request.duration)"]
        )
        if let holder = holder(of: owner) {
            emitLinkEvent(request.link, holder: holder) { .linkUpdated(display: result.status.display, link: $0) }
        }
        return BoostResult(
            status: LinkStatusResult(
                result.status, includeDisplay: false, start: start,
                showingLabelOf: labelVisibility(viewer(of: session), of: result.status.decision)
            ),
            boostedUntil: result.boostedUntil.seconds
        ).jsonValue
    }

    /// The owner a Boost acts as: the link's own, when `session` is of the same user or privileged.
    private func boostOwner(of link: LinkID, session: Session) throws(RPCError) -> OwnerID {
        let owner = shared.read { $0.compositor.owner(of: link) }
        guard let owner else { throw .status(.notFound, CompositorError.linkNotFound(link).description) }
        if owner == session.owner || isPrivileged(session.peer) { return owner }
        guard let holder = sessions[owner], holder.peer.uid == session.peer.uid else {
            throw .status(.notFound, CompositorError.linkNotFound(link).description)
        }
        return owner
    }

    /// An adaptive link stepped down or back up: wake the tick plane (the display's
    /// target changed), tell watchers, and say why in the journal.
    func adaptiveStepped(_ step: OverrunMonitor.Step, link: LinkID, session: Session) {
        // The step changed what GetState shows and may move the next rate change: bump the
        // generation and wake the tick plane as any change does.
        shared.change { _ in }
        switch step {
        case .down(let rate):
            logLimited(
                "link \(link.rawValue) stepped down to \(FrameRateMath.format(rate)) Hz: at least half of its last 30 frames finished after their targetTimestamp (adaptive)",
                level: .notice, session: session, metadata: ["event": "link-stepped-down", "link": "\(link.rawValue)", "rate": "\(rate)"],
                limits: &adaptiveLogs, kind: .adaptiveStep
            )
        case .up(let rate):
            let to = rate.map { "\(FrameRateMath.format($0)) Hz" } ?? "its own range"
            logLimited(
                "link \(link.rawValue) stepped back up to \(to): its last 60 frames fit the higher rate (adaptive)",
                level: .info, session: session, metadata: ["event": "link-stepped-up", "link": "\(link.rawValue)"],
                limits: &adaptiveLogs, kind: .adaptiveStep
            )
        }
        if let display = shared.read({ $0.compositor.display(of: link) }) {
            emitLinkEvent(link, holder: session.peer) { .linkUpdated(display: display, link: $0) }
        }
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// Keeps `framectl register`'s stderr line about its link's limit up to date.
///
/// A link's limit is set by its range, its entitlement and the display's cap
/// (`docs/arbitration.md`, step 1); only the cap changes while framectl runs. So the
/// follower asks the daemon again (one `GetState`) only when the cap may have changed:
/// a `capsChanged` event for the link's display, or a rate change whose decision names
/// another cap than the last one seen (in case the caps event was lost from a full
/// buffer). After a reconnect, the resynchronised state is read directly.
struct LimitFollower: Sendable {
    /// The link followed.
    let link: DisplayLinkHandle
    /// What was last shown.
    var tracker: LimitTracker

    /// Follows `watch`'s events until the stream ends or the task is cancelled.
    func follow(_ watch: CompositorWatch) async {
        var tracker = tracker
        var lastCap = link.decision?.cap
        // A cap may have changed between the registration and the watch.
        apply(watch.initialState, tracker: &tracker, lastCap: &lastCap)
        for await event in watch.events {
            if let state = event.resynchronizedState {
                apply(state, tracker: &tracker, lastCap: &lastCap)
                continue
            }
            guard event.display == link.display else { continue }
            switch event.event {
            case .capsChanged?: break
            case .refreshRateChanged(_, _, _, _, let decision?, _)? where decision.cap != lastCap: break
            default: continue
            }
            guard let state = try? await link.connection.state() else { continue }
            apply(state, tracker: &tracker, lastCap: &lastCap)
        }
    }

    /// Prints the link's limit line if `state` shows it changed.
    private func apply(_ state: CompositorState, tracker: inout LimitTracker, lastCap: inout DecisionCap?) {
        guard let display = state.displays.first(where: { $0.id == link.display }) else { return }
        lastCap = display.decision?.cap
        guard let id = link.daemonID, let own = display.links.first(where: { $0.link == id }) else { return }
        if let line = tracker.update(limit: own.limit, cap: display.decision?.cap) { Console.error(line) }
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// What `framectl watch` prints for each compositor event.
enum EventText {
    /// The first lines: the watch id and each display's rate when the watch started.
    static func started(watch: UInt64, state: CompositorState) -> [String] {
        ["watch \(watch) started; press Ctrl-C to stop"]
            + state.displays.map { display in
                "display \(display.id.rawValue): \(FrameRateMath.format(display.refreshRate)) Hz, "
                    + "\(display.links.count) link\(display.links.count == 1 ? "" : "s")"
                    + (display.reason.isEmpty ? "" : " (\(display.reason))")
            }
    }

    /// One event as a line; kinds this client does not know are shown as raw JSON. A rate
    /// change starts with when it happened (seconds on `CLOCK_MONOTONIC`, the daemon's `at`,
    /// else `receivedAt`) and carries its decision's summary.
    static func line(for event: CompositorWatchEvent, receivedAt: Double) -> String {
        switch event.event {
        case .refreshRateChanged(let display, let from, let to, let reason, let decision, let at)?:
            return "\(Fixed.format(at ?? receivedAt, decimals: 6)) display \(display.rawValue): refresh "
                + "\(FrameRateMath.format(from)) Hz -> \(FrameRateMath.format(to)) Hz"
                + (decision.map { "; " + DecisionText.summary($0) } ?? "")
                + (reason.isEmpty ? "" : " (\(reason))")
        case .linkAdded(let display, let link)?:
            return "display \(display.rawValue): link \(link.link.rawValue) added: \(describe(link))"
        case .linkUpdated(let display, let link)?:
            return "display \(display.rawValue): link \(link.link.rawValue) updated: \(describe(link))"
        case .linkRemoved(let display, let link, let reason)?:
            return "display \(display.rawValue): link \(link.rawValue) removed" + (reason.isEmpty ? "" : " (\(reason))")
        case .capsChanged(let display, let caps)?:
            return "display \(display.rawValue): caps \(CapsText.describe(caps))"
        case nil:
            return "event \(event.kind.isEmpty ? "?" : event.kind): \(event.params.jsonString)"
        }
    }

    /// `range (80, 120, 120) Hz, callback 120 Hz, paused, label "x", pid 42 uid 1000 (game)`,
    /// with `no ticks until tick 4 is answered (120 intervals without a tick)` while the
    /// daemon holds the link back for an unanswered tick;
    /// `holder hidden` instead of the pid, uid and command when the daemon does not show them.
    static func describe(_ link: LinkState) -> String {
        var parts = ["range \(link.range) Hz", "callback \(FrameRateMath.format(link.callbackRate)) Hz"]
        if link.paused { parts.append("paused") }
        if link.highFrameRate { parts.append("high frame rate") }
        if let awaiting = link.awaitingFrame {
            parts.append("no ticks until tick \(awaiting.sequence) is answered (\(awaiting.skipped) intervals without a tick)")
        }
        if let label = link.label { parts.append("label \(JSONValue.string(label).jsonString)") }
        if let peer = link.peer {
            parts.append("pid \(peer.pid) uid \(peer.uid)" + (peer.command.map { " (\($0))" } ?? ""))
        } else {
            parts.append("holder hidden")
        }
        return parts.joined(separator: ", ")
    }
}

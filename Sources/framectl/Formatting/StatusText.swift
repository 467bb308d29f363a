import FrameRateModel
import FrameRateProtocol

/// What `framectl status` prints.
enum StatusText {
    /// For each display: rate, profile, reason, the decision, caps, and a table of its links.
    /// - Parameter now: seconds on `CLOCK_MONOTONIC`, for the links' ages and a pending change.
    static func lines(for state: CompositorState, now: Double) -> [String] {
        guard !state.displays.isEmpty else { return ["no displays"] }
        var lines: [String] = []
        for (index, display) in state.displays.enumerated() {
            if index > 0 { lines.append("") }
            lines.append(contentsOf: self.lines(for: display, now: now))
        }
        return lines
    }

    /// One display's block, at most 80 columns wide where the words allow.
    static func lines(for display: DisplayState, now: Double) -> [String] {
        let rates = display.supportedRates.map(FrameRateMath.format).joined(separator: ", ")
        var lines = ["display \(display.id.rawValue): \(FrameRateMath.format(display.refreshRate)) Hz" + panelNote(display)]
        lines += Wrap.lines(
            "profile: ", "\(display.profile.isEmpty ? "-" : display.profile)\(rates.isEmpty ? "" : " (\(rates) Hz)")",
            indent: "  ", width: 80
        )
        lines += Wrap.lines("reason:  ", display.reason.isEmpty ? "-" : display.reason, indent: "  ", width: 80)
        if let decision = display.decision {
            lines += DecisionText.lines(for: decision, links: display.links, now: now)
        }
        lines += panelLines(display)
        lines += Wrap.lines("caps:    ", CapsText.describe(display.caps), indent: "  ", width: 80)
        guard !display.links.isEmpty else {
            lines.append("  links:   none")
            return lines
        }
        var table = TextTable(header: ["LINK", "RANGE HZ", "CALLBACK", "LABEL", "PID", "UID", "AGE", "COMMAND"])
        for link in display.links {
            table.rows.append([
                String(link.link.rawValue),
                link.range.description + (link.highFrameRate ? " hfr" : ""),
                link.paused ? "paused" : "\(FrameRateMath.format(link.callbackRate)) Hz",
                link.label ?? "-",
                // `-` where the daemon hides the holder (another user's link).
                link.peer.map { String($0.pid) } ?? "-",
                link.peer.map { String($0.uid) } ?? "-",
                link.since.map { age(now - $0) } ?? "-",
                link.peer?.command ?? "-",
            ])
        }
        lines.append("  links:")
        lines.append(contentsOf: table.lines(indent: "    "))
        let presenting = display.links.compactMap { link in link.hitches.map { (link.link, $0) } }
        if !presenting.isEmpty {
            lines.append("  hitches (hitch time per second; under 5 ms/s good, 5-10 noticeable, over 10 bad):")
            for (link, summary) in presenting {
                lines += Wrap.lines("", HitchText.describe(link: link, summary), indent: "    ", width: 80)
            }
        }
        lines += awaitingLines(display, now: now)
        if display.links.contains(where: { $0.peer == nil }) {
            lines += Wrap.lines("  ", Self.hiddenHolderNote, indent: "  ", width: 80)
        }
        return lines
    }

    /// The links the daemon holds back until their client finishes a frame, each with the
    /// tick it waits on, for how long, and the intervals lost so far; nothing when none.
    static func awaitingLines(_ display: DisplayState, now: Double) -> [String] {
        let waiting = display.links.compactMap { link in link.awaitingFrame.map { (link.link, $0) } }
        guard !waiting.isEmpty else { return [] }
        var lines = Wrap.lines(
            "", "waiting for frames (a link that answers its ticks with FrameDone or Present gets no tick while its latest one is unanswered):",
            indent: "  ", width: 80
        )
        for (link, frame) in waiting {
            let text = "link \(link.rawValue): tick \(frame.sequence), \(Fixed.format(Swift.max(0, now - frame.since), decimals: 3)) s ago, "
                + "is unanswered; \(frame.skipped) interval\(frame.skipped == 1 ? "" : "s") passed without a tick"
            lines += Wrap.lines("", text, indent: "    ", width: 80)
        }
        return lines
    }

    /// ` (panel 80 Hz)` after the display's rate when content velocity lowers the panel below the grid.
    static func panelNote(_ display: DisplayState) -> String {
        guard let panel = display.panelRate, !FrameRateMath.equal(panel, display.refreshRate) else { return "" }
        return " (panel \(FrameRateMath.format(panel)) Hz)"
    }

    /// The `panel:` line while a link's content velocity steers the panel: its rate, why,
    /// and that callbacks stay on the grid.
    static func panelLines(_ display: DisplayState) -> [String] {
        guard let decision = display.panelDecision else { return [] }
        let rate = FrameRateMath.format(display.panelRate ?? decision.rate)
        let text = "\(rate) Hz, content velocity in play (callbacks stay on the "
            + "\(FrameRateMath.format(display.refreshRate)) Hz grid): \(decision.reason)"
            + (decision.pending.map { "; moving to \(FrameRateMath.format($0.rate)) Hz" } ?? "")
        return Wrap.lines("panel:   ", text, indent: "  ", width: 80)
    }

    /// Said under the links when the daemon hid some holders, so `-` is not read as "unknown".
    static let hiddenHolderNote =
        "(-: another user's link; the daemon shows who holds a link, and its label, only to that user, root and the admin group)"

    /// How long ago, compactly: `42s`, `5m12s`, `3h04m`, `2d05h`.
    static func age(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "-" }
        let whole = seconds < 0 ? 0 : seconds >= 1e12 ? Int64(1e12) : Int64(seconds)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : String(value) }
        switch whole {
        case ..<60: return "\(whole)s"
        case ..<3600: return "\(whole / 60)m\(two(whole % 60))s"
        case ..<86400: return "\(whole / 3600)h\(two(whole % 3600 / 60))m"
        default: return "\(whole / 86400)d\(two(whole % 86400 / 3600))h"
        }
    }
}

import FrameRateModel
import FrameRateProtocol

/// What `framectl status` prints.
enum StatusText {
    /// For each display: rate, profile, reason, caps, and a table of its links.
    static func lines(for state: CompositorState) -> [String] {
        guard !state.displays.isEmpty else { return ["no displays"] }
        var lines: [String] = []
        for (index, display) in state.displays.enumerated() {
            if index > 0 { lines.append("") }
            lines.append(contentsOf: self.lines(for: display))
        }
        return lines
    }

    /// One display's block.
    static func lines(for display: DisplayState) -> [String] {
        let rates = display.supportedRates.map(FrameRateMath.format).joined(separator: ", ")
        var lines = [
            "display \(display.id.rawValue): \(FrameRateMath.format(display.refreshRate)) Hz",
            "  profile: \(display.profile.isEmpty ? "-" : display.profile)\(rates.isEmpty ? "" : " (\(rates) Hz)")",
            "  reason:  \(display.reason.isEmpty ? "-" : display.reason)",
            "  caps:    \(CapsText.describe(display.caps))",
        ]
        guard !display.links.isEmpty else {
            lines.append("  links:   none")
            return lines
        }
        var table = TextTable(header: ["LINK", "RANGE (MIN, MAX, PREF) HZ", "PAUSED", "CALLBACK", "LABEL", "PID", "UID", "COMMAND"])
        for link in display.links {
            table.rows.append([
                String(link.link.rawValue),
                link.range.description + (link.highFrameRate ? " hfr" : ""),
                link.paused ? "yes" : "no",
                "\(FrameRateMath.format(link.callbackRate)) Hz",
                link.label ?? "-",
                String(link.peer.pid),
                String(link.peer.uid),
                link.peer.command ?? "-",
            ])
        }
        lines.append("  links:")
        lines.append(contentsOf: table.lines(indent: "    "))
        return lines
    }
}

import FrameRateModel
import FrameRateProtocol

/// What `framectl residency` prints: each display's time at each rate, as a table with a
/// bar chart, and who held each rate there. At most 80 columns.
enum ResidencyText {
    /// The bar chart's width in cells.
    static let barWidth = 30

    static func lines(for state: CompositorState) -> [String] {
        var lines: [String] = []
        for (index, display) in state.displays.enumerated() {
            if index > 0 { lines.append("") }
            lines += self.lines(for: display)
        }
        return lines
    }

    static func lines(for display: DisplayState) -> [String] {
        let total = display.residency.reduce(0) { $0 + $1.seconds }
        var lines = ["display \(display.id.rawValue): \(seconds(display.uptime ?? total)) since start, now \(FrameRateMath.format(display.refreshRate)) Hz"]
        guard total > 0 else {
            lines.append("  no time recorded yet")
            return lines
        }
        var table = TextTable(header: ["RATE", "TIME", "SHARE", "BAR"])
        for entry in display.residency {
            let share = entry.seconds / total
            table.rows.append([
                "\(FrameRateMath.format(entry.rate)) Hz", seconds(entry.seconds), Fixed.format(share * 100, decimals: 1) + "%", bar(share),
            ])
        }
        lines += table.lines(indent: "  ")
        lines.append("  held by:")
        for entry in display.residency {
            lines.append("    \(FrameRateMath.format(entry.rate)) Hz")
            for holder in entry.heldBy.prefix(5) {
                lines.append(fit("      " + padded(seconds(holder.seconds)) + name(holder)))
            }
            if entry.heldBy.count > 5 {
                let rest = entry.heldBy.dropFirst(5).reduce(0) { $0 + $1.seconds }
                lines.append("      " + padded(seconds(rest)) + "\(entry.heldBy.count - 5) more")
            }
        }
        return lines
    }

    /// `link 3 'list' (pid 4242 scroller)`, or what a reason means.
    static func name(_ holder: ResidencyHolderState) -> String {
        guard let link = holder.link else {
            switch holder.reason {
            case "cap": return "a cap (Low Power Mode, Limit Frame Rate or thermal)"
            case "idle": return "idle (no link voted)"
            case "lowest": return "nothing held it up (the lowest rate the links allow)"
            case "ended": return "links that ended (merged past the daemon's bound)"
            default: return holder.reason ?? "-"
            }
        }
        var text = "link \(link.rawValue)"
        if let label = holder.label { text += " '\(label)'" }
        if let peer = holder.peer { text += " (pid \(peer.pid) \(peer.command ?? "?"))" }
        return text
    }

    /// A time in a 10-column field.
    static func padded(_ text: String) -> String { text + String(repeating: " ", count: max(2, 10 - text.count)) }

    /// `line` cut to 80 columns (a long label or command ends in `…`).
    static func fit(_ line: String) -> String { line.count <= 80 ? line : String(line.prefix(79)) + "…" }

    /// A bar of `share` (0...1) in eighths of a cell.
    static func bar(_ share: Double) -> String {
        let eighths = Int((max(0, min(1, share)) * Double(barWidth * 8)).rounded())
        let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partials[eighths % 8]
    }

    /// `12.5 s`, `5m12s` past a minute.
    static func seconds(_ value: Double) -> String {
        value < 60 ? Fixed.format(value, decimals: 1) + " s" : StatusText.age(value)
    }
}

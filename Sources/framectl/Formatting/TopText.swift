import FrameRateModel
import FrameRateProtocol

/// One screen of `framectl top`: each display's rate and decision, its links with their
/// callback rate, ticks/s, skipped/s and hitch ratio, and the top residency holders.
/// Every line fits `width` columns and the screen `height` lines.
enum TopText {
    /// What `top` measured of one link over the last refresh.
    struct LinkRates: Equatable {
        /// Ticks delivered per second.
        var ticks: Double
        /// Intervals skipped per second.
        var skipped: Double
    }

    static func lines(
        state: CompositorState, rates: [LinkID: LinkRates], clock: String, width: Int = 80, height: Int = 24
    ) -> [String] {
        var lines = ["framectl top  \(clock)  (q or Ctrl-C quits)"]
        for display in state.displays {
            lines.append("")
            var head = "display \(display.id.rawValue): \(FrameRateMath.format(display.refreshRate)) Hz"
            if let decision = display.decision { head += "  rule \(decision.rule.rawValue)" }
            if let pending = display.decision?.pending { head += "  -> \(FrameRateMath.format(pending.rate)) Hz pending" }
            lines.append(head)
            lines.append("  " + (display.decision.map { _ in display.reason } ?? display.reason))
            var table = TextTable(header: ["LINK", "PID", "COMMAND", "LABEL", "CALLBACK", "TICKS/S", "SKIP/S", "HITCH ms/s"])
            for link in display.links {
                let measured = rates[link.link]
                table.rows.append([
                    String(link.link.rawValue), link.peer.map { String($0.pid) } ?? "-", clip(link.peer?.command ?? "-", 12), clip(link.label ?? "-", 12),
                    link.paused ? "paused" : FrameRateMath.format(link.callbackRate) + " Hz",
                    measured.map { Fixed.format($0.ticks, decimals: 1) } ?? "-",
                    measured.map { Fixed.format($0.skipped, decimals: 1) } ?? "-",
                    link.hitches.map { Fixed.format($0.ratioMillisecondsPerSecond, decimals: 1) + " " + HitchText.rating($0.ratioMillisecondsPerSecond) }
                        ?? "-",
                ])
            }
            lines += display.links.isEmpty ? ["  no links"] : table.lines(indent: "  ")
            lines += holders(display)
        }
        var fitted = lines.map { fit($0, width: width) }
        if fitted.count > height {
            fitted = Array(fitted.prefix(height - 1)) + [fit("… \(fitted.count - height + 1) more lines (a taller terminal shows them)", width: width)]
        }
        return fitted
    }

    /// `  held high by: link 3 'list' (scroller) 75% of 120 Hz, …`: the largest shares
    /// of time above the display's lowest rate, at most three.
    static func holders(_ display: DisplayState) -> [String] {
        let total = display.residency.reduce(0) { $0 + $1.seconds }
        guard total > 0 else { return [] }
        var shares: [(name: String, rate: Double, seconds: Double)] = []
        for entry in display.residency {
            for holder in entry.heldBy { shares.append((ResidencyText.name(holder), entry.rate, holder.seconds)) }
        }
        let top = shares.sorted { $0.rate != $1.rate ? $0.rate > $1.rate : $0.seconds > $1.seconds }.prefix(3)
        return ["  residency (top holders):"] + top.map { share in
            "    \(FrameRateMath.format(share.rate)) Hz  \(Fixed.format(share.seconds / total * 100, decimals: 1))%  \(share.name)"
        }
    }

    static func clip(_ text: String, _ width: Int) -> String { text.count <= width ? text : String(text.prefix(width - 1)) + "…" }

    static func fit(_ line: String, width: Int) -> String { line.count <= width ? line : String(line.prefix(max(1, width - 1))) + "…" }
}

import FrameRateModel
import FrameRateProtocol

/// How a `decision` is shown to people: by `status`, `watch` and `register`.
enum DecisionText {
    /// The ladder step of `docs/arbitration.md` a rule names, for people:
    /// `exact (step 2: the lowest rate that serves every link exactly)`.
    static func rule(_ rule: ArbitrationRule) -> String {
        let step: String
        switch rule {
        case .cap: step = "step 1: a cap holds the display"
        case .exact: step = "step 2: the lowest rate that serves every link exactly"
        case .priority: step = "step 3: 30 Hz and 60 Hz links first"
        case .preferred: step = "step 4: closest to the preferred rates"
        case .mostServed: step = "step 5: as many links as possible"
        case .idle: step = "step 6: no voting link"
        }
        return "\(rule.rawValue) (\(step))"
    }

    /// What imposes a cap, for people: `Low Power Mode`, `the thermal state`.
    static func capName(_ source: CapSource) -> String {
        switch source {
        case .lowPower: "Low Power Mode"
        case .limitFrameRate: "Limit Frame Rate"
        case .thermal: "the thermal state"
        case .maxRefreshRate: "the daemon's --max-refresh-rate"
        }
    }

    /// `Low Power Mode, 60 Hz` or `none`.
    static func cap(_ cap: DecisionCap?) -> String {
        cap.map { "\(capName($0.source)), \(FrameRateMath.format($0.hz)) Hz" } ?? "none"
    }

    /// `link 3 (pid 42, game)`: a link with its holder when the display lists it and
    /// the daemon shows who holds it (not for another user's link).
    static func link(_ id: LinkID, among links: [LinkState]) -> String {
        guard let link = links.first(where: { $0.link == id }), let peer = link.peer else { return "link \(id.rawValue)" }
        return "link \(id.rawValue) (pid \(peer.pid)" + (peer.command.map { ", \($0)" } ?? "") + ")"
    }

    /// `link 1 wants 120 Hz, gets 60 Hz (no high-frame-rate entitlement)`.
    static func limit(_ limit: LinkLimit, cap: DecisionCap?) -> String {
        let why: String
        switch limit.by {
        case .entitlement: why = "no high-frame-rate entitlement"
        case .cap: why = "capped by " + (cap.map { capName($0.source) } ?? "a cap")
        case .overrun: why = "stepped down: its frames kept missing their deadline"
        case .velocity: why = "on the panel: its content velocity is " + FrameRateMath.format(limit.contentVelocity ?? 0) + " pt/s"
        }
        return "link \(limit.link.rawValue) wants \(FrameRateMath.format(limit.wanted)) Hz, "
            + "gets \(FrameRateMath.format(limit.got)) Hz (\(why))"
    }

    /// `10 Hz in 0.184 s (at 1234.567)` or `10 Hz now` once due.
    /// - Parameter now: seconds on `CLOCK_MONOTONIC`.
    static func pending(_ pending: DecisionPending, now: Double) -> String {
        let left = pending.at - now
        let when = left > 0 ? "in \(Fixed.format(left, decimals: 3)) s" : "now"
        return "\(FrameRateMath.format(pending.rate)) Hz \(when) (at \(Fixed.format(pending.at, decimals: 3)))"
    }

    /// The labelled lines of `status`, each at most `width` columns where the words allow:
    /// rule, held by, cap, limited links (one per line) and the pending change.
    /// - Parameters:
    ///   - links: the display's links, to name each link's holder.
    ///   - now: seconds on `CLOCK_MONOTONIC`, to say how soon a pending change is due.
    static func lines(for decision: DecisionState, links: [LinkState], now: Double, width: Int = 80) -> [String] {
        var lines = Wrap.lines("rule:    ", rule(decision.rule), indent: "  ", width: width)
        var holders = decision.deciders.map { link($0, among: links) }.joined(separator: ", ")
        if decision.deciderCount > decision.deciders.count { holders += " and \(decision.deciderCount - decision.deciders.count) more" }
        lines += Wrap.lines("held by: ", holders.isEmpty ? "no link" : holders, indent: "  ", width: width)
        lines += Wrap.lines("cap:     ", cap(decision.cap), indent: "  ", width: width)
        if decision.limited.isEmpty {
            lines += Wrap.lines("limited: ", "no link", indent: "  ", width: width)
        }
        for (index, entry) in decision.limited.enumerated() {
            lines += Wrap.lines(index == 0 ? "limited: " : "         ", limit(entry, cap: decision.cap), indent: "  ", width: width)
        }
        if decision.limitedCount > decision.limited.count {
            lines.append("           and \(decision.limitedCount - decision.limited.count) more")
        }
        lines += Wrap.lines("pending: ", decision.pending.map { pending($0, now: now) } ?? "none", indent: "  ", width: width)
        return lines
    }

    /// The one-line summary of a decision for `watch`:
    /// `rule exact, held by link 3, cap none, 1 limited`.
    static func summary(_ decision: DecisionState) -> String {
        var holders = decision.deciders.map { "link \($0.rawValue)" }.joined(separator: ", ")
        if decision.deciderCount > decision.deciders.count { holders += " and \(decision.deciderCount - decision.deciders.count) more" }
        var parts = ["rule \(decision.rule.rawValue)", "held by " + (holders.isEmpty ? "no link" : holders), "cap " + cap(decision.cap)]
        if decision.limitedCount > 0 { parts.append("\(decision.limitedCount) limited") }
        return parts.joined(separator: "; ")
    }
}

/// Word wrapping for labelled lines.
enum Wrap {
    /// `text` after `indent + label`, wrapped at spaces so lines stay within `width`
    /// columns; continuation lines are indented to line up under the text. A word longer
    /// than a line is not broken.
    static func lines(_ label: String, _ text: String, indent: String, width: Int) -> [String] {
        let lead = indent + label
        let hang = String(repeating: " ", count: lead.count)
        var lines: [String] = []
        var line = lead
        var lineHasWord = false
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = hang
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }
}

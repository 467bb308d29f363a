/// The one-sentence reason of a ``Decision``, built only from its fields, so the
/// prose and the structure can never disagree.
enum DecisionReason {
    /// The reason for a decision with these fields; `name` gives the name people see
    /// for a link (`link 3 'scroll' (80, 120, 120)`), `lowestRate` is the profile's.
    static func sentence(
        rate: Double, rule: ArbitrationRule, deciders: [LinkID], deciderCount: Int,
        cap: RefreshRateCap?, limited: [LinkLimit], limitedCount: Int, name: (LinkID) -> String
    ) -> String {
        let hz = "\(FrameRateMath.format(rate)) Hz"
        let holders = deciders.first.map { name($0) + more(deciderCount) }
        var sentence: String
        switch rule {
        case .idle:
            return "no voting link: the display idles at its lowest rate, \(hz)"
        case .cap:
            guard let cap else { return "\(hz): no cap is set" }  // not produced by the arbiter
            let capHz = "\(FrameRateMath.format(cap.rate)) Hz"
            sentence = "\(cap.source) caps the display at \(capHz)"
            if rate > cap.rate {
                return sentence + ", below every supported rate: it runs at its lowest, \(hz)"
            }
            if !FrameRateMath.equal(rate, cap.rate) { sentence += ", so \(hz) is the highest rate it may run at" }
            if let pulled = limited.first(where: { $0.by == .cap }) {
                // Every listed limit may be by the cap while more are left off the list.
                let listed = limited.count { $0.by == .cap }
                let all = listed == limited.count ? limitedCount : listed
                sentence += "; \(name(pulled.link)) wants \(FrameRateMath.format(pulled.wanted)) Hz"
                    + (limited.count < limitedCount && all == listed ? " and others" : more(all))
            }
            return sentence
        case .exact:
            if let holders {
                sentence = "\(hz) is the lowest rate that serves every link exactly; \(holders) "
                    + (deciderCount == 1 ? "holds" : "hold") + " it there"
            } else {
                sentence = "\(hz), the lowest rate allowed, serves every link exactly"
            }
        case .priority:
            sentence = "no rate serves every link exactly; \(hz) serves \(holders ?? "the 30 Hz and 60 Hz links") exactly, "
                + "as 30 Hz and 60 Hz have priority"
        case .preferred:
            sentence = "no rate serves every link exactly; \(hz) keeps every link inside its range, "
                + "closest to the preferred rates" + (holders.map { " of \($0)" } ?? "")
        case .mostServed:
            sentence = "no rate keeps every link inside its range; \(hz) serves the most links"
                + (holders.map { ", \($0)" } ?? "")
        }
        if let first = limited.first {
            let by: String
            switch first.by {
            case .entitlement: by = "without the high-frame-rate entitlement"
            case .cap: by = "by \(cap?.source ?? "a cap")"
            case .overrun: by = "because its frames kept missing their deadline (adaptive)"
            case .velocity: by = "on the panel by its content velocity, \(FrameRateMath.format(first.contentVelocity ?? 0)) pt/s"
            }
            let subject = first.link == deciders.first ? "it" : name(first.link)
            sentence += "; \(subject) is limited to \(FrameRateMath.format(first.got)) Hz \(by)"
                + (limitedCount > 1 ? " (\(limitedCount - 1) more \(limitedCount == 2 ? "link is" : "links are") limited)" : "")
        }
        return sentence
    }

    /// ` and N more` for a list of `count` whose first entry was named.
    private static func more(_ count: Int) -> String {
        count > 1 ? " and \(count - 1) more" : ""
    }
}

/// Turns every voting link's hint, the caps and the entitlement rules into one
/// refresh rate for a display. Pure and deterministic: the same votes in any
/// order give the same decision.
///
/// The ladder (see `docs/arbitration.md`):
/// 1. Candidates are the supported rates at or below the effective cap; rates
///    above 60 Hz on an entitlement profile only when a voting link holding the
///    entitlement steers (has a preferred rate, or a minimum above 60 Hz).
///    Each link's range is first clamped to at most the cap, and to 60 Hz when it
///    lacks a required entitlement.
/// 2. The lowest candidate that serves every link exactly.
/// 3. Else, among candidates that keep every link inside its range, the smallest
///    total relative distance to the preferred rates; ties to the lower rate.
/// 4. Else the candidate serving the most links inside their range, then as in 3.
/// 5. No voting link: the lowest supported rate (the governor applies it only
///    after the idle timeout).
///
/// Cost: O(distinct ranges x candidates) after one O(links) grouping pass;
/// links with equal effective ranges are scored once.
public struct Arbiter: Sendable {
    /// The display's profile.
    public let profile: DisplayProfile
    /// The daemon's configured ceiling, in Hz, or `nil`.
    public let configuredMaximum: Double?

    /// Builds an arbiter for `profile`, optionally capped at `configuredMaximum` Hz.
    public init(profile: DisplayProfile, configuredMaximum: Double? = nil) {
        self.profile = profile
        self.configuredMaximum = configuredMaximum
    }

    /// One group of links that share an effective (clamped) range.
    private struct Group {
        var range: FrameRateRange
        var count: Int
        /// The lowest-numbered link in the group, named in reasons.
        var representative: LinkVote
    }

    /// The limit a link's range is clamped to, in Hz, and why, or `nil` for none.
    public func clampLimit(hasEntitlement: Bool, caps: DisplayCaps) -> RefreshRateCap? {
        var limit = caps.effectiveCap(configuredMaximum: configuredMaximum)
        if profile.requiresEntitlementAbove60Hz && !hasEntitlement
            && (limit.map { $0.rate > DisplayProfile.entitlementFreeLimit } ?? true)
        {
            limit = RefreshRateCap(rate: DisplayProfile.entitlementFreeLimit, source: "no high-frame-rate entitlement")
        }
        return limit
    }

    /// The range a link is arbitrated and paced with: its own, clamped by ``clampLimit(hasEntitlement:caps:)``.
    public func effectiveRange(of range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps) -> FrameRateRange {
        guard let limit = clampLimit(hasEntitlement: hasEntitlement, caps: caps) else { return range }
        return range.clamped(toAtMost: limit.rate)
    }

    /// The callback cadence a link with `range` gets at `refresh` Hz.
    public func cadence(of range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps, refresh: Double) -> CallbackCadence {
        CallbackCadence(range: effectiveRange(of: range, hasEntitlement: hasEntitlement, caps: caps), refresh: refresh)
    }

    /// Decides the refresh rate for `votes` (the unpaused links) under `caps`.
    public func decide(votes: some Sequence<LinkVote>, caps: DisplayCaps) -> ArbitrationDecision {
        let cap = caps.effectiveCap(configuredMaximum: configuredMaximum)
        var groups: [FrameRateRange: Group] = [:]
        var unlocksHighRates = !profile.requiresEntitlementAbove60Hz
        var limitingCap: RefreshRateCap?
        var entitlementClamped: LinkVote?
        for vote in votes {
            let limit = clampLimit(hasEntitlement: vote.hasHighFrameRateEntitlement, caps: caps)
            var range = vote.range
            if let limit, vote.range.maximum > limit.rate {
                range = vote.range.clamped(toAtMost: limit.rate)
                if limit == cap {
                    limitingCap = cap
                } else if entitlementClamped.map({ vote.link < $0.link }) ?? true {
                    entitlementClamped = vote
                }
            }
            if vote.hasHighFrameRateEntitlement
                && (vote.range.hasPreferredRate || vote.range.minimum > DisplayProfile.entitlementFreeLimit)
            {
                unlocksHighRates = true
            }
            if var group = groups[range] {
                group.count += 1
                if vote.link < group.representative.link { group.representative = vote }
                groups[range] = group
            } else {
                groups[range] = Group(range: range, count: 1, representative: vote)
            }
        }
        // Sorted so that sums and reasons never depend on registration order.
        let ordered = groups.values.sorted { $0.representative.link < $1.representative.link }

        guard !ordered.isEmpty else {
            return ArbitrationDecision(
                refreshRate: profile.lowestRate, rule: .idle,
                reason: "no voting link: idle at the lowest rate, \(FrameRateMath.format(profile.lowestRate)) Hz",
                decidingLink: nil, limitingCap: nil
            )
        }
        let candidates = profile.supportedRates.reversed().filter { rate in
            FrameRateMath.lessOrEqual(rate, cap?.rate ?? .infinity)
                && (unlocksHighRates || FrameRateMath.lessOrEqual(rate, DisplayProfile.entitlementFreeLimit))
        }
        guard !candidates.isEmpty else {
            return ArbitrationDecision(
                refreshRate: profile.lowestRate, rule: .capBelowEveryRate,
                reason: "\(cap?.source ?? "the cap") allows at most \(FrameRateMath.format(cap?.rate ?? 0)) Hz, "
                    + "below every supported rate: using the lowest, \(FrameRateMath.format(profile.lowestRate)) Hz",
                decidingLink: nil, limitingCap: cap
            )
        }
        let suffix = Self.clampNote(cap: limitingCap, entitlementClamped: entitlementClamped)

        // Rule 2: the lowest candidate that serves every link exactly.
        var blocker: Group?
        for candidate in candidates {
            if let failing = ordered.first(where: { !CallbackCadence(range: $0.range, refresh: candidate).isExact }) {
                blocker = failing
                continue
            }
            let reason: String
            if let blocker {
                reason = "\(FrameRateMath.format(candidate)) Hz is the lowest rate that serves every link exactly; "
                    + "a lower rate would not serve \(blocker.representative.reasonName)"
            } else {
                reason = "\(FrameRateMath.format(candidate)) Hz is the lowest allowed rate and serves every link exactly"
            }
            return ArbitrationDecision(
                refreshRate: candidate, rule: .exact, reason: reason + suffix,
                decidingLink: blocker?.representative.link ?? ordered[0].representative.link, limitingCap: limitingCap
            )
        }

        // Rules 3 and 4: score every candidate; most links inside their range first,
        // then the smallest total distance, then the lower rate.
        var best: (rate: Double, served: Int, distance: Double, farthest: Group?, unserved: Group?)?
        for candidate in candidates {
            var served = 0
            var distance = 0.0
            var farthest: (group: Group, distance: Double)?
            var unserved: Group?
            for group in ordered {
                let cadence = CallbackCadence(range: group.range, refresh: candidate)
                if cadence.isInsideRange {
                    served += group.count
                } else if unserved == nil {
                    unserved = group
                }
                distance += cadence.distance * Double(group.count)
                if cadence.distance > (farthest?.distance ?? 0) { farthest = (group, cadence.distance) }
            }
            if let current = best {
                let better =
                    served > current.served
                    || (served == current.served && distance < current.distance
                        && !FrameRateMath.equal(distance, current.distance))
                if !better { continue }
            }
            best = (candidate, served, distance, farthest?.group, unserved)
        }
        let chosen = best!
        let total = ordered.reduce(0) { $0 + $1.count }
        let rate = FrameRateMath.format(chosen.rate)
        if chosen.served == total {
            let who = chosen.farthest.map { "; farthest from its preference: \($0.representative.reasonName)" } ?? ""
            return ArbitrationDecision(
                refreshRate: chosen.rate, rule: .closest,
                reason: "no rate serves every link exactly; \(rate) Hz keeps every link inside its range "
                    + "with the smallest total distance to the preferred rates\(who)" + suffix,
                decidingLink: chosen.farthest?.representative.link, limitingCap: limitingCap
            )
        }
        let who = chosen.unserved.map { "; not served: \($0.representative.reasonName)" } ?? ""
        return ArbitrationDecision(
            refreshRate: chosen.rate, rule: .mostServed,
            reason: "no rate keeps every link inside its range; \(rate) Hz serves the most, "
                + "\(chosen.served) of \(total)\(who)" + suffix,
            decidingLink: chosen.unserved?.representative.link, limitingCap: limitingCap
        )
    }

    private static func clampNote(cap: RefreshRateCap?, entitlementClamped: LinkVote?) -> String {
        var note = ""
        if let cap { note += "; capped at \(FrameRateMath.format(cap.rate)) Hz by \(cap.source)" }
        if let vote = entitlementClamped {
            note += "; \(vote.link) and any like it lack the high-frame-rate entitlement and are limited to 60 Hz"
        }
        return note
    }
}

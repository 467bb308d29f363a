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
    fileprivate struct Group {
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
    ///
    /// The same as the generic form; this overload is compiled for arrays inside the
    /// module, so callers in other modules do not run the unspecialized generic code.
    public func decide(votes: [LinkVote], caps: DisplayCaps) -> ArbitrationDecision {
        var ballot = Ballot(self, caps: caps, expectedVotes: votes.count)
        for vote in votes { ballot.add(link: vote.link, range: vote.range, entitled: vote.hasHighFrameRateEntitlement, vote: vote) }
        return decide(ballot)
    }

    /// Decides the refresh rate for `votes` (the unpaused links) under `caps`.
    public func decide(votes: some Sequence<LinkVote>, caps: DisplayCaps) -> ArbitrationDecision {
        var ballot = Ballot(self, caps: caps, expectedVotes: votes.underestimatedCount)
        for vote in votes { ballot.add(link: vote.link, range: vote.range, entitled: vote.hasHighFrameRateEntitlement, vote: vote) }
        return decide(ballot)
    }

    /// The votes of one arbitration, grouped by effective range as they are added.
    ///
    /// A voter's ``LinkVote`` (with its label) is only built when it becomes a group's
    /// representative or the one named for lacking the entitlement, so a caller holding
    /// its links in another form (``Display``) adds them without building a vote per link.
    struct Ballot {
        fileprivate let cap: RefreshRateCap?
        private let entitledLimit: RefreshRateCap?
        private let plainLimit: RefreshRateCap?
        private let plainLimitIsCap: Bool
        fileprivate var groups: GroupTable
        fileprivate var unlocksHighRates: Bool
        fileprivate var limitingCap: RefreshRateCap?
        fileprivate var entitlementClamped: LinkVote?

        init(_ arbiter: Arbiter, caps: DisplayCaps, expectedVotes: Int) {
            cap = caps.effectiveCap(configuredMaximum: arbiter.configuredMaximum)
            // The two limits a vote can be clamped to, resolved once rather than per vote.
            entitledLimit = arbiter.clampLimit(hasEntitlement: true, caps: caps)
            plainLimit = arbiter.clampLimit(hasEntitlement: false, caps: caps)
            plainLimitIsCap = plainLimit == cap
            groups = GroupTable(expectedVotes: expectedVotes)
            unlocksHighRates = !arbiter.profile.requiresEntitlementAbove60Hz
        }

        /// Counts one voting link; `vote` is evaluated only if the link must be named.
        @inline(__always)
        mutating func add(link: LinkID, range: FrameRateRange, entitled: Bool, vote: @autoclosure () -> LinkVote) {
            let limit = entitled ? entitledLimit : plainLimit
            var effective = range
            if let limit, range.maximum > limit.rate {
                effective = range.clamped(toAtMost: limit.rate)
                if entitled || plainLimitIsCap {
                    limitingCap = cap
                } else if entitlementClamped.map({ link < $0.link }) ?? true {
                    entitlementClamped = vote()
                }
            }
            if entitled && (range.hasPreferredRate || range.minimum > DisplayProfile.entitlementFreeLimit) {
                unlocksHighRates = true
            }
            groups.add(link: link, range: effective, vote: vote())
        }
    }

    /// Decides the refresh rate for the votes in `ballot`.
    func decide(_ ballot: Ballot) -> ArbitrationDecision {
        let cap = ballot.cap
        let unlocksHighRates = ballot.unlocksHighRates
        let limitingCap = ballot.limitingCap
        let entitlementClamped = ballot.entitlementClamped
        let groups = ballot.groups
        // Sorted so that sums and reasons never depend on registration order.
        let ordered = groups.groups.sorted { $0.representative.link < $1.representative.link }

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

        // The scoring loops below run for every group and candidate rate: they read plain
        // ranges and counts (no reference counting), and name groups by index.
        let ranges = ordered.map(\.range)
        let counts = ordered.map(\.count)

        // Rule 2: the lowest candidate that serves every link exactly.
        var blocker: Int?
        for candidate in candidates {
            if let failing = ranges.firstIndex(where: { !CallbackCadence(range: $0, refresh: candidate).isExact }) {
                blocker = failing
                continue
            }
            let reason: String
            if let blocker {
                reason = "\(FrameRateMath.format(candidate)) Hz is the lowest rate that serves every link exactly; "
                    + "a lower rate would not serve \(ordered[blocker].representative.reasonName)"
            } else {
                reason = "\(FrameRateMath.format(candidate)) Hz is the lowest allowed rate and serves every link exactly"
            }
            return ArbitrationDecision(
                refreshRate: candidate, rule: .exact, reason: reason + suffix,
                decidingLink: ordered[blocker ?? 0].representative.link, limitingCap: limitingCap
            )
        }

        // Rules 3 and 4: score every candidate; most links inside their range first,
        // then the smallest total distance, then the lower rate.
        var best: (rate: Double, served: Int, distance: Double, farthest: Int?, unserved: Int?)?
        for candidate in candidates {
            var served = 0
            var distance = 0.0
            var farthest: Int?
            var farthestDistance = 0.0
            var unserved: Int?
            for index in ranges.indices {
                let cadence = CallbackCadence(range: ranges[index], refresh: candidate)
                if cadence.isInsideRange {
                    served += counts[index]
                } else if unserved == nil {
                    unserved = index
                }
                distance += cadence.distance * Double(counts[index])
                if cadence.distance > farthestDistance {
                    farthest = index
                    farthestDistance = cadence.distance
                }
            }
            if let current = best {
                let better =
                    served > current.served
                    || (served == current.served && distance < current.distance
                        && !FrameRateMath.equal(distance, current.distance))
                if !better { continue }
            }
            best = (candidate, served, distance, farthest, unserved)
        }
        let chosen = best!
        let total = counts.reduce(0, +)
        let rate = FrameRateMath.format(chosen.rate)
        if chosen.served == total {
            let who = chosen.farthest.map { "; farthest from its preference: \(ordered[$0].representative.reasonName)" } ?? ""
            return ArbitrationDecision(
                refreshRate: chosen.rate, rule: .closest,
                reason: "no rate serves every link exactly; \(rate) Hz keeps every link inside its range "
                    + "with the smallest total distance to the preferred rates\(who)" + suffix,
                decidingLink: chosen.farthest.map { ordered[$0].representative.link }, limitingCap: limitingCap
            )
        }
        let who = chosen.unserved.map { "; not served: \(ordered[$0].representative.reasonName)" } ?? ""
        return ArbitrationDecision(
            refreshRate: chosen.rate, rule: .mostServed,
            reason: "no rate keeps every link inside its range; \(rate) Hz serves the most, "
                + "\(chosen.served) of \(total)\(who)" + suffix,
            decidingLink: chosen.unserved.map { ordered[$0].representative.link }, limitingCap: limitingCap
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

extension Arbiter {
    /// Links grouped by effective range: an open-addressing hash table over the groups
    /// array, keyed by the range's bit patterns. Arbitration groups every voting link on
    /// every Register, Update and close, so this avoids `Dictionary`'s SipHash per vote.
    fileprivate struct GroupTable {
        /// The groups, in order of first appearance.
        private(set) var groups: [Group] = []
        /// Each group's range, apart so that probing compares plain values.
        private var keys: [FrameRateRange] = []
        /// Index into ``groups`` plus one, or 0 for an empty slot; the count is a power of two.
        private var slots: [Int32]

        init(expectedVotes: Int) {
            var capacity = 16
            while capacity < 2 * Swift.min(Swift.max(expectedVotes, 8), 1 << 20) { capacity <<= 1 }
            slots = Array(repeating: 0, count: capacity)
        }

        /// A hash of the range whose high bits are well mixed; `+ 0` folds `-0.0` into `0.0`,
        /// as `==` does. Slots take the top bits (Fibonacci hashing): rates' bit patterns end
        /// in long runs of zeros, which would leave the low bits of a product all zero.
        private static func hash(_ range: FrameRateRange) -> UInt64 {
            var hash = (range.minimum + 0).bitPattern &* 0x9E37_79B9_7F4A_7C15
            hash = (hash ^ (hash >> 29) ^ (range.maximum + 0).bitPattern) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ (hash >> 29) ^ (range.preferred + 0).bitPattern) &* 0x94D0_49BB_1331_11EB
            return hash
        }

        /// The slot of `hash` in a table of `count` (a power of two) slots.
        private static func slot(_ hash: UInt64, count: Int) -> Int {
            Int(truncatingIfNeeded: hash >> UInt64(64 - count.trailingZeroBitCount))
        }

        /// Counts `link` in the group of `range`, creating the group on first sight;
        /// `vote` is evaluated only when the link becomes the group's representative.
        @inline(__always)
        mutating func add(link: LinkID, range: FrameRateRange, vote: @autoclosure () -> LinkVote) {
            let mask = slots.count - 1
            var slot = Self.slot(Self.hash(range), count: slots.count)
            while true {
                let entry = Int(slots[slot])
                if entry == 0 { break }
                if keys[entry - 1] == range {
                    groups[entry - 1].count += 1
                    if link < groups[entry - 1].representative.link { groups[entry - 1].representative = vote() }
                    return
                }
                slot = (slot + 1) & mask
            }
            groups.append(Group(range: range, count: 1, representative: vote()))
            keys.append(range)
            slots[slot] = Int32(groups.count)
            if 2 * groups.count > slots.count { grow() }
        }

        private mutating func grow() {
            slots = Array(repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for (index, range) in keys.enumerated() {
                var slot = Self.slot(Self.hash(range), count: slots.count)
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(index + 1)
            }
        }
    }
}

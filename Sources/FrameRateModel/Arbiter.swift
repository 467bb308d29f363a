/// Turns every voting link's hint, the caps and the entitlement rules into one
/// refresh rate for a display, and says why in a ``Decision``. Pure and
/// deterministic: the same votes in any order give the same decision.
///
/// The ladder (see `docs/arbitration.md`; each step is an ``ArbitrationRule``):
/// 1. Candidates are the supported rates at or below the effective cap; rates
///    above 60 Hz on an entitlement profile only when a voting link holding the
///    entitlement steers (has a preferred rate, or a minimum above 60 Hz).
///    Each link's range is first clamped to its ceiling (``ceiling(hasEntitlement:caps:)``).
///    `cap`: the cap is below every supported rate, or the display ends up at the
///    highest candidate while a link the cap limits pulls above it.
/// 2. `exact`: the lowest candidate that serves every link exactly.
/// 3. `priority`: else, when a link prefers 30 Hz or 60 Hz, the candidates that serve
///    every such link exactly and keep every link inside its range, scored as in 4.
/// 4. `preferred`: else, among candidates that keep every link inside its range, the
///    smallest total relative distance to the preferred rates; ties to the lower rate.
/// 5. `most-served`: else the candidate serving the most links inside their range, then as in 4.
/// 6. `idle`: no voting link: the lowest supported rate (the governor applies it only
///    after the idle timeout).
///
/// Cost: O(distinct ranges x candidates) after one O(links) grouping pass;
/// links with equal effective ranges are scored once, and the decision's lists are
/// bounded by ``Decision/listLimit``. With a ``CadenceTable`` kept across decisions (as
/// ``Display`` keeps one), a range's cadences are computed once, and scoring reads them.
public struct Arbiter: Sendable {
    /// The display's profile.
    public let profile: DisplayProfile
    /// The daemon's configured ceiling, in Hz, or `nil`.
    public let configuredMaximum: Double?
    /// The secret the grouping tables hash ranges with (``HashSeed``); the display's
    /// ``CadenceTable``s use it too. Decisions do not depend on it.
    let hashSeed: HashSeed

    /// Builds an arbiter for `profile`, optionally capped at `configuredMaximum` Hz.
    public init(profile: DisplayProfile, configuredMaximum: Double? = nil) {
        self.init(profile: profile, configuredMaximum: configuredMaximum, hashSeed: .random())
    }

    /// The same, with a given hash seed (tests).
    init(profile: DisplayProfile, configuredMaximum: Double? = nil, hashSeed: HashSeed) {
        self.profile = profile
        self.configuredMaximum = configuredMaximum
        self.hashSeed = hashSeed
    }

    /// The highest rate a link may have, in Hz, and what sets it.
    public struct Ceiling: Hashable, Sendable {
        /// The rate, in Hz.
        public let rate: Double
        /// What sets it.
        public let by: LimitReason
    }

    /// One group of links that share an effective (clamped) range.
    fileprivate struct Group {
        var range: FrameRateRange
        /// The lowest-numbered links of the group, and how many it has.
        var members: LowestLinks<LinkID>
        /// The lowest-numbered link in the group, named in reasons.
        var lowest: LinkID
        var count: Int { members.total }
    }

    /// The ceiling a link's range is clamped to, or `nil` for none: the cap, or 60 Hz
    /// on a profile that needs the entitlement when the link lacks it. When both are
    /// 60 Hz the entitlement is named: it is the limit the link's developer can lift,
    /// and it stays when the cap goes.
    public func ceiling(hasEntitlement: Bool, caps: DisplayCaps) -> Ceiling? {
        let cap = caps.effectiveCap(configuredMaximum: configuredMaximum)
        if profile.requiresEntitlementAbove60Hz && !hasEntitlement
            && (cap.map { FrameRateMath.lessOrEqual(DisplayProfile.entitlementFreeLimit, $0.rate) } ?? true)
        {
            return Ceiling(rate: DisplayProfile.entitlementFreeLimit, by: .entitlement)
        }
        return cap.map { Ceiling(rate: $0.rate, by: .cap) }
    }

    /// The range a link is arbitrated and paced with: its own, clamped to its ceiling.
    public func effectiveRange(of range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps) -> FrameRateRange {
        guard let ceiling = ceiling(hasEntitlement: hasEntitlement, caps: caps) else { return range }
        return range.clamped(toAtMost: ceiling.rate)
    }

    /// How `link` with `range` is limited, or `nil` when its ceiling allows what it asked for.
    public func limit(of link: LinkID, range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps) -> LinkLimit? {
        ceiling(hasEntitlement: hasEntitlement, caps: caps).flatMap { Self.limit(of: link, range: range, under: $0) }
    }

    /// How `link` with `range` is limited when adaptive pacing also holds it to
    /// `overrunCeiling` Hz (``OverrunMonitor``): the lower of the two ceilings decides.
    public func limit(
        of link: LinkID, range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps, overrunCeiling: Double?
    ) -> LinkLimit? {
        let ceiling = ceiling(hasEntitlement: hasEntitlement, caps: caps)
        if let overrunCeiling, overrunCeiling < (ceiling?.rate ?? .infinity) {
            return Self.limit(of: link, range: range, under: Ceiling(rate: overrunCeiling, by: .overrun))
        }
        return ceiling.flatMap { Self.limit(of: link, range: range, under: $0) }
    }

    /// The range a link held to `overrunCeiling` Hz is arbitrated and paced with.
    public func effectiveRange(
        of range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps, overrunCeiling: Double?
    ) -> FrameRateRange {
        let effective = effectiveRange(of: range, hasEntitlement: hasEntitlement, caps: caps)
        return overrunCeiling.map { effective.clamped(toAtMost: $0) } ?? effective
    }

    /// How a link with `range` is limited under `ceiling`, or `nil` when it is not.
    fileprivate static func limit(of link: LinkID, range: FrameRateRange, under ceiling: Ceiling) -> LinkLimit? {
        let wanted = range.hasPreferredRate ? range.preferred : range.maximum
        guard wanted > ceiling.rate && !FrameRateMath.equal(wanted, ceiling.rate) else { return nil }
        return LinkLimit(link: link, by: ceiling.by, wanted: wanted, got: ceiling.rate)
    }

    /// The callback cadence a link with `range` gets at `refresh` Hz: never above its ceiling.
    public func cadence(of range: FrameRateRange, hasEntitlement: Bool, caps: DisplayCaps, refresh: Double) -> CallbackCadence {
        CallbackCadence(range: effectiveRange(of: range, hasEntitlement: hasEntitlement, caps: caps), refresh: refresh)
    }

    /// Decides the refresh rate for `votes` (the unpaused links, each link once) under `caps`.
    ///
    /// The same as the generic form; this overload is compiled for arrays inside the
    /// module, so callers in other modules do not run the unspecialized generic code.
    public func decide(votes: [LinkVote], caps: DisplayCaps) -> Decision {
        var ballot = Ballot(self, caps: caps, expectedVotes: votes.count)
        for vote in votes { ballot.add(link: vote.link, range: vote.range, entitled: vote.hasHighFrameRateEntitlement) }
        var computed: CadenceTable? = nil
        // At most two links are named: finding each costs one pass, as counting them did.
        return decide(ballot, cadences: &computed) { link in votes.first { $0.link == link } }
    }

    /// Decides the refresh rate for `votes` (the unpaused links, each link once) under `caps`.
    public func decide(votes: some Sequence<LinkVote>, caps: DisplayCaps) -> Decision {
        decide(votes: Array(votes), caps: caps)
    }

    /// The votes of one arbitration, grouped by effective range as they are added.
    ///
    /// It holds link ids, not ``LinkVote``s: the decision names at most two links, whose
    /// votes (with their labels) ``Arbiter/decide(_:cadences:naming:)`` asks for by id, so a
    /// caller holding its links in another form (``Display``) builds no vote per link or group.
    struct Ballot {
        fileprivate let cap: RefreshRateCap?
        private let entitledCeiling: Ceiling?
        private let plainCeiling: Ceiling?
        fileprivate var groups: GroupTable
        fileprivate var unlocksHighRates: Bool
        /// The lowest-numbered limited links, and how many there are.
        fileprivate var limited = LowestLinks<LinkLimit>()
        /// The highest rate a link limited by the cap pulls the display to, in Hz:
        /// its preferred rate, or its minimum without one. 0 when none.
        fileprivate var capPull = 0.0

        init(_ arbiter: Arbiter, caps: DisplayCaps, expectedVotes: Int) {
            cap = caps.effectiveCap(configuredMaximum: arbiter.configuredMaximum)
            // The two ceilings a vote can have, resolved once rather than per vote.
            entitledCeiling = arbiter.ceiling(hasEntitlement: true, caps: caps)
            plainCeiling = arbiter.ceiling(hasEntitlement: false, caps: caps)
            groups = GroupTable(expectedVotes: expectedVotes, seed: arbiter.hashSeed)
            unlocksHighRates = !arbiter.profile.requiresEntitlementAbove60Hz
        }

        /// Counts one voting link, held to `overrunCeiling` Hz by adaptive pacing
        /// (``OverrunMonitor``) if that is below its entitlement or cap ceiling.
        @inline(__always)
        mutating func add(link: LinkID, range: FrameRateRange, entitled: Bool, overrunCeiling: Double? = nil) {
            add(members: CollectionOfOne(link), range: range, entitled: entitled, overrunCeiling: overrunCeiling)
        }

        /// Counts the voting links `members` (lowest id first, not empty), which all vote
        /// `range` with the same entitlement and adaptive ceiling (one ``VoteTally`` entry).
        ///
        /// Only the lowest ``Decision/listLimit`` members can be listed (among the deciders
        /// or the limited links): any other has that many lower members. The rest are
        /// counted without being read, so an entry costs O(listLimit), whatever its size.
        @inline(__always)
        mutating func add(
            members: some RandomAccessCollection<LinkID>, range: FrameRateRange, entitled: Bool, overrunCeiling: Double?
        ) {
            let listed = members.prefix(Decision.listLimit)
            add(listed: listed, unlisted: members.count - listed.count, range: range, entitled: entitled, overrunCeiling: overrunCeiling)
        }

        /// Counts voting links that all vote `range` with the same entitlement and adaptive
        /// ceiling, given as their lowest members `listed` (lowest id first, at most
        /// ``Decision/listLimit``, not empty unless `unlisted` is 0) and the number of the
        /// others, `unlisted`, all above them: what ``add(members:range:entitled:overrunCeiling:)``
        /// reads of an entry, for a caller that leaves some of its members out (the panel's
        /// ballot, ``Display``).
        @inline(__always)
        mutating func add(
            listed: some Collection<LinkID>, unlisted: Int, range: FrameRateRange, entitled: Bool, overrunCeiling: Double?
        ) {
            guard let lowest = listed.first else { return }
            /// Lists the listed members as limited under `ceiling`, if it limits them.
            func noteLimited(under ceiling: Ceiling) -> Bool {
                guard let limit = Arbiter.limit(of: lowest, range: range, under: ceiling) else { return false }
                limited.insert(limit)
                for member in listed.dropFirst() {
                    limited.insert(LinkLimit(link: member, by: limit.by, wanted: limit.wanted, got: limit.got))
                }
                limited.countUnlisted(unlisted)
                return true
            }
            let ceiling = entitled ? entitledCeiling : plainCeiling
            if entitled && (range.hasPreferredRate || range.minimum > DisplayProfile.entitlementFreeLimit) {
                unlocksHighRates = true
            }
            if let overrunCeiling, overrunCeiling < (ceiling?.rate ?? .infinity), range.maximum > overrunCeiling {
                _ = noteLimited(under: Ceiling(rate: overrunCeiling, by: .overrun))
                groups.add(members: listed, unlisted: unlisted, range: range.clamped(toAtMost: overrunCeiling))
                return
            }
            var effective = range
            if let ceiling, range.maximum > ceiling.rate {
                effective = range.clamped(toAtMost: ceiling.rate)
                if noteLimited(under: ceiling) && ceiling.by == .cap {
                    capPull = Swift.max(capPull, range.hasPreferredRate ? range.preferred : range.minimum)
                }
            }
            groups.add(members: listed, unlisted: unlisted, range: effective)
        }

        /// Lists `limit` among the limited links (a panel vote's ``LimitReason/velocity``).
        mutating func note(_ limit: LinkLimit) {
            limited.insert(limit)
        }
    }

    /// Decides the refresh rate for the votes in `ballot`, scoring the groups' ranges with
    /// `cadences` (a table kept for this arbiter's profile: rows it lacks are added), or,
    /// without one, computing each group's cadence at each candidate as the ladder needs it
    /// (one decision gains nothing from a table: the groups' ranges are distinct).
    /// `naming` gives the vote of a link the decision's reason names (at most two: the
    /// first decider and a limited link), as the ballot counted it.
    func decide(_ ballot: Ballot, cadences: inout CadenceTable?, naming: (LinkID) -> LinkVote?) -> Decision {
        let cap = ballot.cap
        // Sorted so that sums and reasons never depend on registration order: the groups'
        // indices, so that sorting moves integers rather than groups (each holds an array,
        // whose copies are reference counted).
        let groups = ballot.groups.groups
        let ordered = groups.indices.sorted { groups[$0].lowest < groups[$1].lowest }

        func decision(_ rate: Double, _ rule: ArbitrationRule, holders: [Int] = []) -> Decision {
            var deciders = LowestLinks<LinkID>()
            for index in holders { deciders.merge(groups[ordered[index]].members) }
            let listed = deciders.items
            let deciderCount = deciders.total
            let limited = ballot.limited.items
            // The links the sentence names (at most two), kept so it can be said again
            // without their labels (``Decision/reason(showingLabelOf:)``).
            var named: [LinkVote] = []
            let reason = DecisionReason.sentence(
                rate: rate, rule: rule, deciders: listed, deciderCount: deciderCount, cap: cap,
                limited: limited, limitedCount: ballot.limited.total
            ) { link in
                guard let vote = naming(link) else { return "\(link)" }
                if !named.contains(where: { $0.link == link }) { named.append(vote) }
                return vote.reasonName
            }
            return Decision(
                rate: rate, rule: rule, deciders: listed, deciderCount: deciderCount, cap: cap,
                limited: limited, limitedCount: ballot.limited.total, pending: nil, reason: reason, named: named
            )
        }

        // Step 6: no voting link. (A kept table then holds no range in use.)
        guard !ordered.isEmpty else {
            cadences?.compact(keeping: EmptyCollection())
            return decision(profile.lowestRate, .idle)
        }
        // Lowest first, each with its column in the profile's (descending) rates.
        let columns = profile.supportedRates.indices.reversed().filter { column in
            let rate = profile.supportedRates[column]
            return FrameRateMath.lessOrEqual(rate, cap?.rate ?? .infinity)
                && (ballot.unlocksHighRates || FrameRateMath.lessOrEqual(rate, DisplayProfile.entitlementFreeLimit))
        }
        let candidates = columns.map { profile.supportedRates[$0] }
        // Step 1: the cap is below every supported rate. (A profile that needs the
        // entitlement always has a rate at or below 60 Hz, so only a cap empties the list.)
        guard let highest = candidates.last else {
            cadences?.compact(keeping: EmptyCollection())
            return decision(profile.lowestRate, .cap)
        }

        // The scoring loops below run for every group and candidate rate: they read each
        // group's row of cadences and its count (no reference counting), and name groups by
        // index. Closures, not key paths: a key path is projected through the runtime per element.
        let ranges = ordered.map { groups[$0].range }
        let counts = ordered.map { groups[$0].count }
        let (rate, rule, holders): (Double, ArbitrationRule, [Int])
        if var table = cadences.take() {
            precondition(table.rates == profile.supportedRates, "a cadence table of another profile")
            let width = table.rates.count
            let bases = ranges.map { table.row(of: $0) * width }
            let scores = TableScores(cells: table.allCells, bases: bases, columns: columns)
            (rate, rule, holders) = Self.ladder(candidates: candidates, scores: scores, ranges: ranges, counts: counts)
            table.compact(keeping: ranges)
            cadences = table
        } else {
            let scores = ComputedScores(ranges: ranges, candidates: candidates)
            (rate, rule, holders) = Self.ladder(candidates: candidates, scores: scores, ranges: ranges, counts: counts)
        }
        // Step 1 again: the display sits at the highest rate the cap allows while a
        // link the cap limits pulls above it: the cap, not the links, holds it there.
        if FrameRateMath.equal(rate, highest) && ballot.capPull > highest && !FrameRateMath.equal(ballot.capPull, highest) {
            return decision(rate, .cap)
        }
        return decision(rate, rule, holders: holders)
    }

    /// Where the ladder reads group `group`'s cadence at the candidate at `position`.
    private protocol Scores {
        func cell(_ group: Int, _ position: Int) -> CadenceTable.Cell
        /// Whether some callback rate of the candidate lies inside the group's range:
        /// `cell(group, position).isInside`, which may cost less than the whole cell.
        func isInside(_ group: Int, _ position: Int) -> Bool
    }

    /// Cadences from a ``CadenceTable``'s cells: group `g` at candidate position `p` is
    /// `cells[bases[g] + columns[p]]` (its row's first cell, plus the candidate's column).
    private struct TableScores: Scores {
        let cells: [CadenceTable.Cell]
        let bases: [Int]
        let columns: [Int]

        @inline(__always) func cell(_ group: Int, _ position: Int) -> CadenceTable.Cell { cells[bases[group] + columns[position]] }
        @inline(__always) func isInside(_ group: Int, _ position: Int) -> Bool { cell(group, position).isInside }
    }

    /// Cadences computed when read, as ``CadenceTable`` computes its cells.
    private struct ComputedScores: Scores {
        let ranges: [FrameRateRange]
        let candidates: [Double]

        @inline(__always) func cell(_ group: Int, _ position: Int) -> CadenceTable.Cell {
            CadenceTable.Cell(CallbackCadence(range: ranges[group], refresh: candidates[position]))
        }
        /// Only the divisors' bounds, as ``CallbackCadence`` decides `isInsideRange`: a
        /// third of a whole cadence's divisions.
        @inline(__always) func isInside(_ group: Int, _ position: Int) -> Bool {
            FrameRateMath.divisors(of: candidates[position], inside: ranges[group]) != nil
        }
    }

    /// Steps 2 to 5 over `candidates` (lowest first) for groups with `ranges` and
    /// `counts`, their cadences in `scores`: the rate, the rule and the indices of the
    /// groups that hold it.
    private static func ladder(candidates: [Double], scores: some Scores, ranges: [FrameRateRange], counts: [Int]) -> (Double, ArbitrationRule, [Int]) {
        // Step 2: the lowest candidate that serves every group exactly. A group holds the
        // rate when it alone keeps some lower candidate from serving everyone.
        var soleBlockers = Array(repeating: false, count: ranges.count)
        for (position, candidate) in candidates.enumerated() {
            var failures = 0
            var failing = 0
            for index in ranges.indices where !scores.cell(index, position).isExact {
                failures += 1
                failing = index
                if failures > 1 { break }
            }
            if failures == 1 { soleBlockers[failing] = true }
            guard failures == 0 else { continue }
            var holders = soleBlockers.indices.filter { soleBlockers[$0] }
            if holders.isEmpty && position > 0 {
                // No group alone: the groups that keep the next lower candidate out hold it together.
                holders = ranges.indices.filter { !scores.cell($0, position - 1).isExact }
            }
            return (candidate, .exact, holders)
        }

        // Steps 3 to 5: score every candidate by the links inside their range and the total
        // distance, and note whether it serves every group preferring 30 or 60 Hz exactly.
        // Step 3 (30 Hz and 60 Hz have priority) takes the best candidate that keeps every
        // link inside and serves those exactly; else the most links inside their range
        // first, then the smallest total distance, then the lower rate. Both choices are
        // made among the candidates that keep the most links inside, so the distances,
        // the dearest part of a cadence, are summed for those alone.
        let prioritized = ranges.indices.filter { index in
            ranges[index].hasPreferredRate
                && (FrameRateMath.equal(ranges[index].preferred, 30) || FrameRateMath.equal(ranges[index].preferred, 60))
        }
        let total = counts.reduce(0, +)
        var served = Array(repeating: 0, count: candidates.count)
        for position in candidates.indices {
            for index in ranges.indices where scores.isInside(index, position) { served[position] += counts[index] }
        }
        let mostServed = served.max() ?? 0
        var best: (position: Int, distance: Double)?
        var bestPrioritized: (rate: Double, distance: Double)?
        for (position, candidate) in candidates.enumerated() where served[position] == mostServed {
            var distance = 0.0
            var prioritizedExact = !prioritized.isEmpty
            var next = 0  // the position in `prioritized` of the next group that prefers 30 or 60 Hz
            for index in ranges.indices {
                let cell = scores.cell(index, position)
                distance += cell.distance * Double(counts[index])
                if next < prioritized.count && prioritized[next] == index {
                    next += 1
                    if !cell.isExact { prioritizedExact = false }
                }
            }
            if prioritizedExact && mostServed == total
                && (bestPrioritized.map { distance < $0.distance && !FrameRateMath.equal(distance, $0.distance) } ?? true)
            {
                bestPrioritized = (candidate, distance)
            }
            if let current = best, !(distance < current.distance && !FrameRateMath.equal(distance, current.distance)) { continue }
            best = (position, distance)
        }
        if let bestPrioritized { return (bestPrioritized.rate, .priority, prioritized) }
        let chosen = best!  // some candidate keeps `mostServed` links inside
        if mostServed == total {
            // Every group is inside its range: the preferences of the groups that have one set the rate.
            return (candidates[chosen.position], .preferred, ranges.indices.filter { ranges[$0].hasPreferredRate })
        }
        // The groups inside their range at the chosen rate are the ones it serves.
        return (candidates[chosen.position], .mostServed, ranges.indices.filter { scores.isInside($0, chosen.position) })
    }
}

extension Arbiter {
    /// Links grouped by effective range: an open-addressing hash table over the groups
    /// array, keyed by the range's bit patterns mixed with the arbiter's secret
    /// (``FrameRateRange/mixedHash(seed:)``). Arbitration groups every voting link on
    /// every Register, Update and close, so this avoids `Dictionary`'s SipHash per vote.
    fileprivate struct GroupTable {
        /// The groups, in order of first appearance.
        private(set) var groups: [Group] = []
        /// Each group's range, apart so that probing compares plain values.
        private var keys: [FrameRateRange] = []
        /// Index into ``groups`` plus one, or 0 for an empty slot; the count is a power of two.
        private var slots: [Int32]
        private let seed: HashSeed

        init(expectedVotes: Int, seed: HashSeed) {
            self.seed = seed
            var capacity = 16
            while capacity < 2 * Swift.min(Swift.max(expectedVotes, 8), 1 << 20) { capacity <<= 1 }
            slots = Array(repeating: 0, count: capacity)
        }

        /// The slot of `hash` in a table of `count` (a power of two) slots.
        private static func slot(_ hash: UInt64, count: Int) -> Int {
            Int(truncatingIfNeeded: hash >> UInt64(64 - count.trailingZeroBitCount))
        }

        /// Counts `listed` (lowest id first, not empty) and `unlisted` more links, all above
        /// them, in the group of `range`, creating the group on first sight.
        @inline(__always)
        mutating func add(members listed: some Collection<LinkID>, unlisted: Int, range: FrameRateRange) {
            guard let lowest = listed.first else { return }
            let mask = slots.count - 1
            var slot = Self.slot(range.mixedHash(seed: seed), count: slots.count)
            while true {
                let entry = Int(slots[slot])
                if entry == 0 { break }
                if keys[entry - 1] == range {
                    for member in listed { groups[entry - 1].members.insert(member) }
                    groups[entry - 1].members.countUnlisted(unlisted)
                    if lowest < groups[entry - 1].lowest { groups[entry - 1].lowest = lowest }
                    return
                }
                slot = (slot + 1) & mask
            }
            var members = LowestLinks<LinkID>()
            for member in listed { members.insert(member) }
            members.countUnlisted(unlisted)
            groups.append(Group(range: range, members: members, lowest: lowest))
            keys.append(range)
            slots[slot] = Int32(groups.count)
            if 2 * groups.count > slots.count { grow() }
        }

        private mutating func grow() {
            slots = Array(repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for (index, range) in keys.enumerated() {
                var slot = Self.slot(range.mixedHash(seed: seed), count: slots.count)
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(index + 1)
            }
        }
    }
}

import FrameRateTesting
import Testing

@testable import FrameRateModel

/// The tally a display keeps of its links' votes (`VoteTally`), and the arbitration that
/// reads it: one ballot entry per distinct vote decides exactly as one vote per link does
/// (`Arbiter.decide(votes:caps:)`).
@Suite struct VoteTallyTests {
    static func key(_ preferred: Double, entitled: Bool = false) throws -> VoteTally.Key {
        VoteTally.Key(range: try FrameRateRange(minimum: 10, maximum: 120, preferred: preferred), entitled: entitled, overrunCeiling: nil)
    }

    static func members(_ tally: VoteTally) -> [Double: [UInt64]] {
        Dictionary(uniqueKeysWithValues: tally.entries.map { ($0.key.range.preferred, $0.members.map(\.rawValue)) })
    }

    @Test("links join, move between and leave entries; members stay sorted; an emptied entry goes and the last takes its place")
    func entries() throws {
        var tally = VoteTally()
        let (a, b, c) = (try Self.key(30), try Self.key(60), try Self.key(120))
        for (id, key) in [(5, a), (2, a), (9, a), (3, b), (7, c)] as [(UInt64, VoteTally.Key)] { tally.set(LinkID(rawValue: id), to: key) }
        #expect(Self.members(tally) == [30: [2, 5, 9], 60: [3], 120: [7]])
        #expect(tally.count == 5)
        // The same vote again changes nothing.
        tally.set(LinkID(rawValue: 5), to: a)
        #expect(Self.members(tally) == [30: [2, 5, 9], 60: [3], 120: [7]])
        // Moving a middle member keeps both entries sorted.
        tally.set(LinkID(rawValue: 5), to: c)
        #expect(Self.members(tally) == [30: [2, 9], 60: [3], 120: [5, 7]])
        // Emptying the first entry (60 Hz is not first; remove 30 Hz's members) moves the last entry into its place.
        tally.set(LinkID(rawValue: 2), to: nil)
        tally.set(LinkID(rawValue: 9), to: nil)
        #expect(Self.members(tally) == [60: [3], 120: [5, 7]])
        #expect(tally.entries.count == 2 && tally.count == 3)
        #expect(tally.key(of: LinkID(rawValue: 9)) == nil && tally.key(of: LinkID(rawValue: 7)) == c)
        // The moved entry is still found by its key.
        tally.set(LinkID(rawValue: 1), to: c)
        tally.set(LinkID(rawValue: 4), to: b)
        #expect(Self.members(tally) == [60: [3, 4], 120: [1, 5, 7]])
        // Removing a link that does not vote is nothing.
        tally.set(LinkID(rawValue: 42), to: nil)
        #expect(tally.count == 5)
    }

    /// What the test knows of one live link, to build its vote afresh.
    struct Live {
        var range: FrameRateRange
        var entitled: Bool
        var paused: Bool
        var label: String?
        var owner: OwnerID
        /// The boost's range and end (since the compositor's start), while boosted.
        var boost: (range: FrameRateRange, end: Duration)?
        /// The content-velocity report in force: points/s, its table rate, and when it
        /// expires (since the compositor's start).
        var velocity: (velocity: Double, rate: Double, expires: Duration)?
    }

    /// The panel's decision with one ballot entry per link, as it was made before the
    /// panel read the tally: each unpaused link votes its range (its boost's while
    /// boosted), and an unboosted link with a velocity report votes its table rate as
    /// `{rate, rate, rate}` (never above its maximum), listed as limited `by: velocity`
    /// when that is below what its ordinary vote would get.
    static func panelDecisionPerLink(_ live: [LinkID: Live], arbiter: Arbiter, caps: DisplayCaps) throws -> Decision {
        var ballot = Arbiter.Ballot(arbiter, caps: caps, expectedVotes: live.count)
        var votes: [LinkID: LinkVote] = [:]
        for (id, link) in live where !link.paused {
            let voted = link.boost?.range ?? link.range
            var vote = LinkVote(link: id, range: voted, hasHighFrameRateEntitlement: link.entitled, label: link.label)
            vote.isBoosted = link.boost != nil
            if let report = link.velocity, link.boost == nil {
                let rate = min(report.rate, voted.maximum)
                vote = LinkVote(
                    link: id, range: try FrameRateRange(minimum: rate, maximum: rate, preferred: rate), hasHighFrameRateEntitlement: link.entitled,
                    label: link.label
                )
                vote.contentVelocity = report.velocity
                let effective = arbiter.effectiveRange(of: voted, hasEntitlement: link.entitled, caps: caps)
                let ordinary = effective.hasPreferredRate ? effective.preferred : effective.maximum
                ballot.add(link: id, range: vote.range, entitled: link.entitled)
                if rate < ordinary && !FrameRateMath.equal(rate, ordinary) {
                    var limit = LinkLimit(link: id, by: .velocity, wanted: ordinary, got: rate)
                    limit.contentVelocity = report.velocity
                    ballot.note(limit)
                }
            } else {
                ballot.add(link: id, range: voted, entitled: link.entitled)
            }
            votes[id] = vote
        }
        var cadences: CadenceTable? = nil
        return arbiter.decide(ballot, cadences: &cadences) { votes[$0] }
    }

    /// What puts a live link in a tally entry, without adaptive ceilings (the test reports no frames).
    static func entryKey(of link: Live) -> [Double] {
        let range = link.boost?.range ?? link.range
        return [range.minimum, range.maximum, range.preferred, link.entitled ? 1 : 0]
    }

    /// The members of every entry, by key (entry order aside).
    static func membersByKey(_ tally: VoteTally) -> [VoteTally.Key: [LinkID]] {
        Dictionary(uniqueKeysWithValues: tally.entries.map { ($0.key, $0.members) })
    }

    @Test("a batch of vote changes leaves the tally exactly as the same changes one by one: joins, moves, leaves, emptied and new entries, a link named twice")
    func batchMatchesOneByOne() throws {
        var rng = SeededGenerator(seed: 11)
        let keys = try [30, 60, 120, 48, 24].map { try Self.key(Double($0)) } + [try Self.key(60, entitled: true)]
        var batched = VoteTally()
        var single = VoteTally()
        for _ in 0..<300 {
            // Shuffled links (as a vsync's ended boosts), some named twice: the last wins.
            let count = Int.random(in: 0..<40, using: &rng)
            var links = Array((1...60).map { LinkID(rawValue: UInt64($0)) }.shuffled(using: &rng).prefix(count))
            if let again = links.first, Bool.random(using: &rng) { links.append(again) }
            let changes = links.map { link -> (link: LinkID, key: VoteTally.Key?) in
                (link, Int.random(in: 0..<7, using: &rng) == 0 ? nil : keys.randomElement(using: &rng)!)
            }
            batched.set(changes)
            for change in changes { single.set(change.link, to: change.key) }
            #expect(Self.membersByKey(batched) == Self.membersByKey(single))
            #expect(batched.count == single.count && batched.entries.count == single.entries.count)
            for entry in batched.entries { #expect(entry.members == entry.members.sorted() && !entry.members.isEmpty) }
            for id in 1...60 { #expect(batched.key(of: LinkID(rawValue: UInt64(id))) == single.key(of: LinkID(rawValue: UInt64(id)))) }
        }
    }

    /// Whether `kept` and `fresh` decide alike: everything but the pending change.
    static func same(_ kept: Decision, _ fresh: Decision) -> Bool {
        kept.rate == fresh.rate && kept.rule == fresh.rule && kept.deciders == fresh.deciders
            && kept.deciderCount == fresh.deciderCount && kept.limited == fresh.limited
            && kept.limitedCount == fresh.limitedCount && kept.cap == fresh.cap && kept.reason == fresh.reason
    }

    @Test(
        "a display's tally decides the grid and the panel as one vote per link through 3,000 registrations, updates, pauses, boosts, velocity reports, cap changes and closes",
        arguments: [3, 4] as [UInt64])
    func tallyDecidesAsVotesPerLink(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var harness = Harness()
        let arbiter = Arbiter(profile: .promotionPhone)
        let owners = (1...3).map { OwnerID(rawValue: $0) }
        var live: [LinkID: Live] = [:]
        var caps = DisplayCaps()
        var rules: Set<ArbitrationRule> = []
        var largestEntry = 0
        var mostLimited = 0
        var mostLimitedByVelocity = 0
        var reportsInLongEntries = 0
        // One velocity in each band of the phone's table (at rest, 60, 80 and 120 Hz): a
        // report that keeps a link's table rate, which does not re-arbitrate, then also
        // keeps the velocity the last decision lists.
        let velocities: [Double] = [0, 100, 200, 400]
        let table = try #require(arbiter.profile.velocityTable)
        // A few ranges, often repeated, so entries grow past the 16 a decision lists; and
        // some with a preference above 60 Hz, which the entitlement and caps limit.
        let ranges = try [(10, 120, 0), (30, 60, 60), (60, 120, 120), (80, 120, 120), (24, 48, 30), (10, 60, 48), (48, 120, 90)]
            .map { try FrameRateRange(minimum: Double($0.0), maximum: Double($0.1), preferred: Double($0.2)) }
        for step in 0..<3000 {
            harness.clock.advance(by: .milliseconds(Int.random(in: 0..<40, using: &rng)))
            let now = harness.compositor.start.duration(to: harness.clock.now)
            // Every change first ends the boosts that ended by now (the display catches up).
            for id in live.keys where live[id]!.boost.map({ $0.end <= now }) ?? false { live[id]!.boost = nil }
            for id in live.keys where live[id]!.velocity.map({ $0.expires <= now }) ?? false { live[id]!.velocity = nil }
            let target = (step / 300) % 2 == 0 ? 12 : 200
            let action = live.count < target ? 0 : live.count > target + 4 ? 3 : Int.random(in: 0..<9, using: &rng)
            switch action {
            case 0, 1:
                let range = ranges.randomElement(using: &rng)!
                let entitled = Bool.random(using: &rng)
                let paused = Int.random(in: 0..<6, using: &rng) == 0
                let owner = owners.randomElement(using: &rng)!
                let label = "l\(step % 7)"
                let status = try harness.compositor.register(
                    owner: owner,
                    configuration: DisplayLinkConfiguration(range: range, isPaused: paused, hasHighFrameRateEntitlement: entitled, label: label),
                    at: harness.clock.now
                )
                live[status.link] = Live(range: range, entitled: entitled, paused: paused, label: label, owner: owner)
            case 2:
                let link = live.anyLink(using: &rng)!
                let range = Bool.random(using: &rng) ? ranges.randomElement(using: &rng)! : nil
                let paused = range == nil ? !live[link]!.paused : nil
                _ = try harness.compositor.update(link: link, owner: live[link]!.owner, range: range, paused: paused, at: harness.clock.now)
                if let range { live[link]!.range = range }
                if let paused { live[link]!.paused = paused }
            case 3:
                let link = live.anyLink(using: &rng)!
                try harness.compositor.invalidate(link: link, owner: live[link]!.owner, at: harness.clock.now)
                live[link] = nil
            case 4:
                let link = live.anyLink(using: &rng)!
                guard live[link]!.boost == nil else { continue }
                let range = ranges.randomElement(using: &rng)!
                let (_, until) = try harness.compositor.boost(
                    link: link, owner: live[link]!.owner, duration: .milliseconds(Int.random(in: 20..<200, using: &rng)), range: range,
                    at: harness.clock.now
                )
                live[link]!.boost = (range, harness.compositor.start.duration(to: until))
            case 5:
                caps.lowPowerMode = Bool.random(using: &rng)
                caps.thermalState = Bool.random(using: &rng) ? .nominal : .serious
                let chosen = caps
                _ = try harness.compositor.setCaps(display: harness.display, at: harness.clock.now) { $0 = chosen }
            case 6 where step % 50 == 6:
                // An owner's connection closes.
                let owner = owners.randomElement(using: &rng)!
                _ = harness.compositor.removeLinks(of: owner, at: harness.clock.now)
                live = live.filter { $0.value.owner != owner }
            case 7:
                let link = live.anyLink(using: &rng)!
                let velocity = velocities.randomElement(using: &rng)!
                try harness.compositor.reportContentVelocity(link: link, owner: live[link]!.owner, velocity: velocity, at: harness.clock.now)
                live[link]!.velocity = (velocity, table.rate(for: velocity), now + ContentVelocityTable.reportLifetime)
            default:
                // A same-vote update: nothing moves in the tally.
                let link = live.anyLink(using: &rng)!
                _ = try harness.compositor.update(link: link, owner: live[link]!.owner, range: live[link]!.range, at: harness.clock.now)
            }
            let votes = live.filter { !$0.value.paused }.map { id, link in
                var vote = LinkVote(link: id, range: link.boost?.range ?? link.range, hasHighFrameRateEntitlement: link.entitled, label: link.label)
                vote.isBoosted = link.boost != nil
                return vote
            }
            let fresh = arbiter.decide(votes: votes, caps: caps)
            let kept = try harness.compositor.decision(of: harness.display)
            #expect(Self.same(kept, fresh), "step \(step): kept \(kept.reason) / fresh \(fresh.reason)")
            // Without a report in force the panel runs on the grid's decision.
            let keptPanel = try harness.compositor.panelDecision() ?? kept
            let freshPanel = try Self.panelDecisionPerLink(live, arbiter: arbiter, caps: caps)
            #expect(Self.same(keptPanel, freshPanel), "step \(step): panel kept \(keptPanel.reason) / fresh \(freshPanel.reason)")
            mostLimitedByVelocity = max(mostLimitedByVelocity, freshPanel.limited.filter { $0.by == .velocity }.count)
            // A report in an entry longer than a decision's lists: the panel's ballot leaves it out of its entry.
            let entrySizes = Dictionary(grouping: live.values.filter { !$0.paused }, by: { Self.entryKey(of: $0) }).mapValues(\.count)
            if live.values.contains(where: { !$0.paused && $0.boost == nil && $0.velocity != nil && entrySizes[Self.entryKey(of: $0)]! > Decision.listLimit }) {
                reportsInLongEntries += 1
            }
            rules.insert(fresh.rule)
            largestEntry = max(largestEntry, Dictionary(grouping: votes, by: { [$0.range.minimum, $0.range.maximum, $0.range.preferred, $0.hasHighFrameRateEntitlement ? 1 : 0] }).values.map(\.count).max() ?? 0)
            mostLimited = max(mostLimited, fresh.limitedCount)
        }
        // The run went where the tally's shortcuts matter: entries longer than a decision's
        // lists, more limited links than it lists, and several rules.
        #expect(largestEntry > Decision.listLimit, "largest entry \(largestEntry)")
        #expect(mostLimited > Decision.listLimit, "most limited \(mostLimited)")
        #expect(rules.count >= 3, "\(rules)")
        // And the panel's: several links limited by their velocity at once, and reports
        // taken out of entries longer than a decision lists.
        #expect(mostLimitedByVelocity > 1, "most limited by velocity \(mostLimitedByVelocity)")
        #expect(reportsInLongEntries > 20, "steps with a report in a long entry: \(reportsInLongEntries)")
    }
}

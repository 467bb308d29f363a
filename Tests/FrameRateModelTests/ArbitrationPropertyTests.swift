import FrameRateModel
import FrameRateTesting
import Testing

/// Properties of arbitration over random link sets, caps and profiles.
/// Seeds are fixed so every failure replays exactly.
@Suite("Arbitration properties")
struct ArbitrationPropertyTests {
    static let seeds: [UInt64] = Array(1...400)

    static let profiles: [DisplayProfile] = DisplayProfile.builtIn + [
        try! DisplayProfile(name: "custom-a", supportedRates: [144, 120, 72, 48, 36, 24], requiresEntitlementAbove60Hz: true),
        try! DisplayProfile(name: "custom-b", supportedRates: [90, 60, 45, 30]),
    ]

    struct Scenario {
        var profile: DisplayProfile
        var caps: DisplayCaps
        var configuredMaximum: Double?
        var votes: [LinkVote]
    }

    static func randomRange(_ rng: inout SeededGenerator, profile: DisplayProfile) -> FrameRateRange {
        let rates = profile.supportedRates + [1, 5, 8, 25, 50, 75, 90, 100, 144]
        let a = rates.randomElement(using: &rng)!
        let b = rates.randomElement(using: &rng)!
        let minimum = min(a, b), maximum = max(a, b)
        let choice = Int.random(in: 0..<4, using: &rng)
        let preferred: Double =
            switch choice {
            case 0: 0
            case 1: minimum
            case 2: maximum
            default: ([minimum, maximum] + rates.filter { (minimum...maximum).contains($0) }).randomElement(using: &rng)!
            }
        return try! FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
    }

    static func scenario(seed: UInt64) -> Scenario {
        var rng = SeededGenerator(seed: seed)
        let profile = profiles.randomElement(using: &rng)!
        let caps = DisplayCaps(
            lowPowerMode: Int.random(in: 0..<5, using: &rng) == 0,
            limitFrameRate: Int.random(in: 0..<6, using: &rng) == 0,
            thermalState: ThermalState.allCases.randomElement(using: &rng)!
        )
        let configuredMaximum: Double? = Int.random(in: 0..<5, using: &rng) == 0 ? [80, 60, 48].randomElement(using: &rng) : nil
        let count = Int.random(in: 0...6, using: &rng)
        let votes = (0..<count).map { index in
            LinkVote(
                link: LinkID(rawValue: UInt64(index + 1)), range: randomRange(&rng, profile: profile),
                hasHighFrameRateEntitlement: Bool.random(using: &rng)
            )
        }
        return Scenario(profile: profile, caps: caps, configuredMaximum: configuredMaximum, votes: votes)
    }

    static func decide(_ scenario: Scenario, votes: [LinkVote]? = nil) -> ArbitrationDecision {
        Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
            .decide(votes: votes ?? scenario.votes, caps: scenario.caps)
    }

    @Test("the rate is a supported rate at or below the cap", arguments: seeds)
    func supportedAndCapped(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let decision = Self.decide(scenario)
        #expect(scenario.profile.supportedRates.contains(decision.refreshRate))
        if let cap = scenario.caps.effectiveCap(configuredMaximum: scenario.configuredMaximum),
            scenario.profile.supportedRates.contains(where: { $0 <= cap.rate })
        {
            #expect(decision.refreshRate <= cap.rate)
        }
        if scenario.profile.requiresEntitlementAbove60Hz && !scenario.votes.contains(where: \.hasHighFrameRateEntitlement) {
            #expect(decision.refreshRate <= 60, "links without the entitlement took the display above 60 Hz")
        }
    }

    @Test("every callback rate is the refresh rate divided by a whole number", arguments: seeds)
    func callbackDividesRefresh(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let arbiter = Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
        let refresh = arbiter.decide(votes: scenario.votes, caps: scenario.caps).refreshRate
        for vote in scenario.votes {
            let cadence = arbiter.cadence(of: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps, refresh: refresh)
            #expect(cadence.divisor >= 1)
            #expect(abs(cadence.callbackRate * Double(cadence.divisor) - refresh) < 1e-9)
        }
    }

    @Test("a full-range link without a preferred rate never changes the settled rate", arguments: seeds)
    func fullRangeMonitorIsNeutral(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let before = Self.decide(scenario).refreshRate
        for entitled in [false, true] {
            let monitor = LinkVote(
                link: LinkID(rawValue: 999),
                range: try! FrameRateRange(minimum: scenario.profile.lowestRate, maximum: scenario.profile.highestRate, preferred: 0),
                hasHighFrameRateEntitlement: entitled
            )
            #expect(Self.decide(scenario, votes: scenario.votes + [monitor]).refreshRate == before, "entitled: \(entitled)")
        }
    }

    @Test("the decision does not depend on registration order", arguments: seeds)
    func orderIndependent(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let decision = Self.decide(scenario)
        var rng = SeededGenerator(seed: seed ^ 0xABCDEF)
        for _ in 0..<5 {
            let shuffled = scenario.votes.shuffled(using: &rng)
            #expect(Self.decide(scenario, votes: shuffled) == decision)
        }
    }

    @Test("links with equal ranges and entitlement get equal callback rates", arguments: seeds)
    func equalLinksEqualRates(seed: UInt64) throws {
        let scenario = Self.scenario(seed: seed)
        guard let first = scenario.votes.first else { return }
        var harness = Harness(profile: scenario.profile, caps: scenario.caps, configuredMaximum: scenario.configuredMaximum)
        for vote in scenario.votes + [first] {
            try harness.register(
                vote.range.minimum, vote.range.maximum, vote.range.preferred, entitled: vote.hasHighFrameRateEntitlement
            )
        }
        try harness.run(seconds: 2)
        let rates = harness.callbackRates
        #expect(rates.first == rates.last)
        for (a, b) in zip(scenario.votes, rates) {
            for (c, d) in zip(scenario.votes, rates) where a.range == c.range && a.hasHighFrameRateEntitlement == c.hasHighFrameRateEntitlement {
                #expect(b == d)
            }
        }
    }

    /// Independent oracle for rule 2: does `candidate` serve `range` exactly?
    /// Searches every whole divisor directly instead of using the model's arithmetic.
    static func servesExactly(_ candidate: Double, _ range: FrameRateRange) -> Bool {
        for n in 1...2000 {
            let rate = candidate / Double(n)
            if range.preferred > 0 {
                if abs(rate - range.preferred) < 1e-9 { return true }
            } else if rate >= range.minimum - 1e-9 && rate <= range.maximum + 1e-9 {
                return true
            }
        }
        return false
    }

    /// The rates the ladder may choose, lowest first: the supported rates at or below the
    /// cap, and above 60 Hz only when an entitled link asks for them (arbitration.md, step 1).
    static func candidates(_ scenario: Scenario) -> [Double] {
        let cap = scenario.caps.effectiveCap(configuredMaximum: scenario.configuredMaximum)?.rate ?? .infinity
        let unlocked = !scenario.profile.requiresEntitlementAbove60Hz
            || scenario.votes.contains { $0.hasHighFrameRateEntitlement && ($0.range.preferred > 0 || $0.range.minimum > 60) }
        return scenario.profile.supportedRates.sorted().filter { $0 <= cap && (unlocked || $0 <= 60) }
    }

    @Test("when a candidate serves every link exactly, the lowest such wins", arguments: seeds)
    func lowestExactWins(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        guard !scenario.votes.isEmpty else { return }
        let arbiter = Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
        let candidates = Self.candidates(scenario)
        let exact = candidates.first { candidate in
            scenario.votes.allSatisfy { vote in
                Self.servesExactly(candidate, arbiter.effectiveRange(of: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps))
            }
        }
        let decision = arbiter.decide(votes: scenario.votes, caps: scenario.caps)
        if let exact {
            #expect(decision.refreshRate == exact)
            // A cap that holds the display at its highest candidate is named instead of the step.
            #expect(decision.rule == .exact || (decision.rule == .cap && exact == candidates.last))
        } else {
            #expect(decision.rule != .exact)
        }
        if decision.rule == .cap {
            #expect(decision.deciders.isEmpty)
            #expect(decision.cap != nil)
        }
    }

    /// A scenario with 40 votes and no cap: enough votes that several candidates keep the
    /// same number of links inside their ranges and the distances decide between them
    /// (with caps, most such scenarios end at step 1).
    static func crowded(seed: UInt64) -> Scenario {
        var scenario = scenario(seed: seed)
        scenario.caps = DisplayCaps()
        scenario.configuredMaximum = nil
        var rng = SeededGenerator(seed: seed &+ 0x5EED)
        scenario.votes = (0..<40).map { index in
            LinkVote(
                link: LinkID(rawValue: UInt64(index + 1)), range: randomRange(&rng, profile: scenario.profile),
                hasHighFrameRateEntitlement: Bool.random(using: &rng)
            )
        }
        return scenario
    }

    /// Checks a decision of steps 3 to 5 against every vote's cadence at every candidate,
    /// computed from the public pieces alone (``CallbackCadence``, the effective ranges):
    /// step 3 when some rate keeps every link inside and serves every link preferring 30
    /// or 60 Hz exactly, else the rates that keep the most links inside; among them the
    /// smallest total distance, and of rates as close, the lowest; and the links named as
    /// holding the rate. Returns whether the decision came from these steps, and among how
    /// many rates it chose.
    @discardableResult
    static func checkSteps3To5(_ scenario: Scenario, seed: UInt64) -> (reached: Bool, rivals: Int) {
        let arbiter = Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
        let decision = arbiter.decide(votes: scenario.votes, caps: scenario.caps)
        guard [.priority, .preferred, .mostServed].contains(decision.rule) else { return (false, 0) }
        let candidates = Self.candidates(scenario)
        let ranges = scenario.votes.map {
            arbiter.effectiveRange(of: $0.range, hasEntitlement: $0.hasHighFrameRateEntitlement, caps: scenario.caps)
        }
        let cadences = candidates.map { candidate in ranges.map { CallbackCadence(range: $0, refresh: candidate) } }
        let served = cadences.map { $0.filter(\.isInsideRange).count }
        let distances = cadences.map { $0.reduce(0) { $0 + $1.distance } }
        let mostServed = served.max() ?? 0
        guard let chosen = candidates.firstIndex(of: decision.refreshRate) else {
            Issue.record("seed \(seed): \(decision.refreshRate) Hz is not a candidate of \(candidates)")
            return (true, 0)
        }
        #expect(served[chosen] == mostServed, "seed \(seed): \(decision.rule) chose \(decision.refreshRate) Hz")
        #expect((decision.rule == .mostServed) == (mostServed < scenario.votes.count), "seed \(seed)")
        let prioritized = ranges.indices.filter {
            ranges[$0].hasPreferredRate && (FrameRateMath.equal(ranges[$0].preferred, 30) || FrameRateMath.equal(ranges[$0].preferred, 60))
        }
        let qualifying = prioritized.isEmpty ? [] : candidates.indices.filter { position in
            served[position] == scenario.votes.count && prioritized.allSatisfy { cadences[position][$0].isExact }
        }
        #expect((decision.rule == .priority) == !qualifying.isEmpty, "seed \(seed): \(decision.rule)")
        // The smallest total distance among the rates the step chooses from; of rates as close, the lowest.
        let rivals = decision.rule == .priority ? qualifying : candidates.indices.filter { served[$0] == mostServed }
        #expect(rivals.contains(chosen), "seed \(seed)")
        let closest = rivals.map { distances[$0] }.min() ?? 0
        #expect(distances[chosen] <= closest + 1e-6 * Swift.max(closest, 1), "seed \(seed): \(distances) at \(candidates)")
        for lower in rivals where lower < chosen {
            #expect(!FrameRateMath.equal(distances[lower], distances[chosen]), "seed \(seed): \(candidates[lower]) Hz was as close")
        }
        // The links that hold the rate: those preferring 30 or 60 Hz, those with a
        // preference, or those inside their range at it.
        let holders: [Int] =
            switch decision.rule {
            case .priority: prioritized
            case .preferred: ranges.indices.filter { ranges[$0].hasPreferredRate }
            default: ranges.indices.filter { cadences[chosen][$0].isInsideRange }
            }
        let holderLinks = holders.map { scenario.votes[$0].link }.sorted()
        #expect(decision.deciderCount == holderLinks.count, "seed \(seed)")
        #expect(decision.deciders == Array(holderLinks.prefix(Decision.listLimit)), "seed \(seed)")
        return (true, rivals.count)
    }

    @Test(
        "without an exact candidate, the rate keeps the most links inside, then the smallest distance, then is the lowest",
        arguments: seeds
    )
    func mostInsideThenClosest(seed: UInt64) {
        Self.checkSteps3To5(Self.scenario(seed: seed), seed: seed)
    }

    /// The same checks over the crowded sets (each issue names its seed), run once here
    /// with the count of sets that reached them.
    @Test("crowded link sets: the same checks, and they reach steps 3 to 5, many choosing among several rates")
    func crowdedSetsReachTheDistances() {
        let outcomes = Self.seeds.map { Self.checkSteps3To5(Self.crowded(seed: $0), seed: $0) }
        // 400 and 28 with these seeds: a change of the generator that stops exercising
        // the choice between rates fails here rather than passing quietly.
        #expect(outcomes.filter(\.reached).count >= 300)
        #expect(outcomes.filter { $0.rivals > 1 }.count >= 20)
    }

    @Test("the decision's lists hold voting links, lowest first; limited links wanted more than they got and never tick faster", arguments: seeds)
    func decisionFields(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let arbiter = Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
        let decision = arbiter.decide(votes: scenario.votes, caps: scenario.caps)
        let ids = Set(scenario.votes.map(\.link))
        #expect((decision.rule == .idle) == scenario.votes.isEmpty)
        #expect(decision.cap == scenario.caps.effectiveCap(configuredMaximum: scenario.configuredMaximum))
        #expect(decision.deciders.allSatisfy(ids.contains))
        #expect(decision.deciders == decision.deciders.sorted())
        #expect(decision.deciderCount >= decision.deciders.count)
        #expect(decision.limited.map(\.link) == decision.limited.map(\.link).sorted())
        #expect(decision.limitedCount == decision.limited.count, "fewer than 16 links: all listed")
        #expect(decision.pending == nil)
        for vote in scenario.votes {
            let limit = arbiter.limit(of: vote.link, range: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps)
            #expect(decision.limit(of: vote.link) == limit)
            guard let limit else { continue }
            #expect(limit.wanted > limit.got)
            let cadence = arbiter.cadence(of: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps, refresh: decision.rate)
            #expect(cadence.callbackRate <= limit.got * (1 + 1e-9))
        }
    }

    @Test("no link ever ticks above its ceiling, whatever rate is in force", arguments: seeds)
    func cadenceNeverAboveCeiling(seed: UInt64) {
        let scenario = Self.scenario(seed: seed)
        let arbiter = Arbiter(profile: scenario.profile, configuredMaximum: scenario.configuredMaximum)
        for vote in scenario.votes {
            let ceiling = arbiter.ceiling(hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps)?.rate ?? .infinity
            let most = min(ceiling, vote.range.maximum)
            for refresh in scenario.profile.supportedRates {
                let cadence = arbiter.cadence(of: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: scenario.caps, refresh: refresh)
                #expect(cadence.callbackRate <= most * (1 + 1e-6), "\(vote.range) at \(refresh) Hz")
            }
        }
    }

    @Test("every decision carries a reason that names a link or a cap")
    func reasonsNameTheDecider() throws {
        let arbiter = Arbiter(profile: .promotionPhone)
        let scroll = LinkVote(link: LinkID(rawValue: 7), range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: true, label: "scroll")
        let clock = LinkVote(link: LinkID(rawValue: 8), range: try FrameRateRange(minimum: 8, maximum: 15, preferred: 0), hasHighFrameRateEntitlement: false)
        let decision = arbiter.decide(votes: [clock, scroll], caps: DisplayCaps())
        #expect(decision.refreshRate == 120)
        #expect(decision.deciders == [scroll.link])
        #expect(decision.reason.contains("link 7 'scroll'"))
        let capped = arbiter.decide(votes: [scroll], caps: DisplayCaps(lowPowerMode: true))
        #expect(capped.reason.contains("Low Power Mode"))
        #expect(capped.cap?.rate == 60)
        #expect(capped.cap?.kind == .lowPower)
        #expect(capped.rule == .cap)
        let unentitled = LinkVote(link: LinkID(rawValue: 9), range: scroll.range, hasHighFrameRateEntitlement: false)
        #expect(arbiter.decide(votes: [unentitled], caps: DisplayCaps()).reason.contains("entitlement"))
    }
}

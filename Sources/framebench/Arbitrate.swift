import ArgumentParser
import FrameRateModel
import FrameRateProtocol
import Histogram

/// `framebench arbitrate`: the cost of arbitration over many varied links, in process.
struct Arbitrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Time Arbiter.decide and a full re-arbitration (Compositor.update) over N varied links (target < 1 ms at 10,000)."
    )

    @Option(help: "Links.") var links = 10_000
    @Option(help: "Timed calls of each kind.") var iterations = 2_000
    @Option(help: "PRNG seed for the links' ranges.") var seed: UInt64 = 42
    @Flag(help: "Preferred rates in 0.5 Hz steps: nearly every link distinct (the worst case).") var worstCase = false
    @Option(help: "Links (spread among the N) with a content-velocity report in force during the re-arbitrations: each then arbitrates the panel too.")
    var velocityReports = 0
    @Option(
        help: "Also time the vsync at which this many boosts end together (their links have the lowest ids and rejoin one vote that the other --links share), against an ordinary vsync of the same links; 0: not measured."
    )
    var boostEnds = 0
    @Flag(help: "Print JSON instead of the table.") var json = false

    func validate() throws {
        guard links > 0 else { throw ValidationError("--links must be at least 1") }
        guard (0...100_000).contains(boostEnds) else { throw ValidationError("--boost-ends must be between 0 and 100000") }
        guard iterations > 0 else { throw ValidationError("--iterations must be at least 1") }
        guard (0...links).contains(velocityReports) else { throw ValidationError("--velocity-reports must be between 0 and --links (\(links))") }
    }

    /// SplitMix64: a small deterministic generator, so every run arbitrates the same links.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Varied ranges: `minimum` and `maximum` from 18 bounds (the phone's rates and off-grid
    /// ones such as 25, 45, 72, 90, 100 Hz); `preferred` none, the maximum, or a common rate
    /// inside the range (`halfSteps`: any multiple of 0.5 Hz inside, nearly every link then
    /// distinct, the worst case for arbitration); about a third hold the entitlement.
    static func votes(count: Int, seed: UInt64, halfSteps: Bool) -> [(range: FrameRateRange, entitled: Bool)] {
        var random = SplitMix64(state: seed)
        let bounds: [Double] = [10, 12, 15, 16, 20, 24, 25, 30, 40, 45, 48, 50, 60, 72, 80, 90, 100, 120]
        let common: [Double] = [24, 30, 40, 48, 50, 60, 72, 80, 90, 100, 120]
        return (0..<count).map { _ in
            let a = bounds.randomElement(using: &random)!
            let b = bounds.randomElement(using: &random)!
            let minimum = min(a, b)
            let maximum = max(a, b)
            var preferred = 0.0
            switch Int.random(in: 0..<4, using: &random) {
            case 0: preferred = 0
            case 1: preferred = maximum
            default:
                if halfSteps {
                    preferred = (Double.random(in: minimum...maximum, using: &random) * 2).rounded() / 2
                } else {
                    preferred = common.filter { (minimum...maximum).contains($0) }.randomElement(using: &random) ?? maximum
                }
            }
            return (try! FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred), Int.random(in: 0..<3, using: &random) == 0)
        }
    }

    /// What one run measured.
    struct Measurement {
        /// `Arbiter.decide` over the links' votes, µs.
        var decide: LatencySummary
        /// `Compositor.update` of one link among them (a whole re-arbitration), µs.
        var rearbitrate: LatencySummary
        /// The distinct range and entitlement pairs among the links.
        var distinctVotes: Int
        /// The panel's decision after the last update: `nil` when no velocity report was in
        /// force, so the panel did not arbitrate apart from the grid.
        var panelDecision: Decision?
        /// A sum of the decided rates, so that no call can be optimised away.
        var checksum: Double
        /// With `--boost-ends`: the vsyncs at which the boosts ended, and ordinary ones, µs.
        var boostEnd: (ending: LatencySummary, ordinary: LatencySummary)?
    }

    func run() throws {
        let measurement = try measure()
        let decideSummary = measurement.decide
        let updateSummary = measurement.rearbitrate
        let distinct = measurement.distinctVotes
        let rates = measurement.checksum
        let met = decideSummary.p99 < 1000 && updateSummary.p99 < 1000
        if json {
            let value: JSONValue = [
                "links": JSONValue(UInt64(links)), "velocity_reports": JSONValue(UInt64(velocityReports)), "distinct_votes": JSONValue(UInt64(distinct)), "iterations": JSONValue(UInt64(iterations)),
                "decide_us": decideSummary.jsonValue, "rearbitrate_us": updateSummary.jsonValue, "target_us": 1000, "met": .bool(met),
                "checksum": JSONValue(rates),
                "boost_ends": JSONValue(UInt64(boostEnds)),
                "boost_end_vsync_us": measurement.boostEnd?.ending.jsonValue ?? .null,
                "ordinary_vsync_us": measurement.boostEnd?.ordinary.jsonValue ?? .null,
            ]
            print(value.jsonString)
        } else {
            print(
                "arbitrate: \(links) varied links (\(distinct) distinct range and entitlement pairs), \(iterations) calls each"
                    + (velocityReports > 0 ? ", \(velocityReports) with a velocity report" : ""))
            print("  Arbiter.decide           p50 \(Int(decideSummary.p50)) us  p99 \(Int(decideSummary.p99)) us  max \(Int(decideSummary.max)) us")
            print("  Compositor.update        p50 \(Int(updateSummary.p50)) us  p99 \(Int(updateSummary.p99)) us  max \(Int(updateSummary.max)) us")
            print("  target p99 < 1000 us: \(met ? "met" : "MISSED")  (checksum \(Int(rates)))")
            if let (ending, ordinary) = measurement.boostEnd {
                print("  vsync, \(boostEnds) boosts ending   p50 \(Int(ending.p50)) us  p99 \(Int(ending.p99)) us  max \(Int(ending.max)) us")
                print("  vsync, ordinary           p50 \(Int(ordinary.p50)) us  p99 \(Int(ordinary.p99)) us  max \(Int(ordinary.max)) us")
            }
        }
    }

    /// Times the calls; prints nothing.
    func measure() throws -> Measurement {
        let varied = Self.votes(count: links, seed: seed, halfSteps: worstCase)
        let arbiter = Arbiter(profile: .promotionPhone)
        let votes = varied.enumerated().map { index, vote in
            LinkVote(link: LinkID(rawValue: UInt64(index + 1)), range: vote.range, hasHighFrameRateEntitlement: vote.entitled, label: index % 10 == 0 ? "label \(index)" : nil)
        }
        let caps = DisplayCaps()
        var decide = nanosecondHistogram()
        var rates = 0.0
        for _ in 0..<10 { rates += arbiter.decide(votes: votes, caps: caps).refreshRate }  // warm caches
        for _ in 0..<iterations {
            let start = System.monotonicNanoseconds()
            let decision = arbiter.decide(votes: votes, caps: caps)
            let end = System.monotonicNanoseconds()
            rates += decision.refreshRate
            _ = decide.record(UInt64(max(end - start, 1_000)))
        }

        // A whole re-arbitration as the daemon does it: Update one link's range among N.
        let start = MonotonicClock.now
        var compositor = Compositor<MonotonicClock>(displays: [DisplayConfiguration(id: DisplayID(rawValue: 0))], start: start)
        let owner = OwnerID(rawValue: 1)
        var ids: [LinkID] = []
        for vote in varied {
            let status = try compositor.register(
                owner: owner, configuration: DisplayLinkConfiguration(range: vote.range, hasHighFrameRateEntitlement: vote.entitled), at: start
            )
            ids.append(status.link)
        }
        let alternate = [try FrameRateRange(minimum: 30, maximum: 120, preferred: 80), try FrameRateRange(minimum: 10, maximum: 60, preferred: 24)]
        // Velocity 200 pt/s: 80 Hz on the phone's panel, below most of these links' votes.
        let reporting = (0..<velocityReports).map { ids[$0 * ids.count / velocityReports] }
        var update = nanosecondHistogram()
        for iteration in 0..<iterations {
            // Renewed before each timed call (a report lasts 0.5 s): the same rate again, which does not re-arbitrate.
            for link in reporting { try compositor.reportContentVelocity(link: link, owner: owner, velocity: 200, at: MonotonicClock.now) }
            let link = ids[(iteration * 7919) % ids.count]
            let begin = System.monotonicNanoseconds()
            let status = try compositor.update(link: link, owner: owner, range: alternate[iteration % 2], at: MonotonicClock.now)
            let end = System.monotonicNanoseconds()
            rates += status.refreshRate
            _ = update.record(UInt64(max(end - begin, 1_000)))
        }
        var measurement = Measurement(
            decide: LatencySummary(decide), rearbitrate: LatencySummary(update),
            distinctVotes: Set(varied.map { "\($0.range) \($0.entitled)" }).count, panelDecision: try compositor.panelDecision(), checksum: rates
        )
        if boostEnds > 0 { measurement.boostEnd = try measureBoostEnds(checksum: &measurement.checksum) }
        return measurement
    }

    /// `--boost-ends`: one user's `boostEnds` links (ids 1...K) and `links` others (the
    /// ids after) all vote (80, 120, 120); the K are boosted to (120, 120, 120) for 50 ms
    /// together, in rounds, and the vsync at which their boosts end (each link rejoins the
    /// others' vote) is timed against the vsyncs before it. Instants are computed from one
    /// reading of the clock, not read again: only the calls' own time is measured.
    func measureBoostEnds(checksum: inout Double) throws -> (ending: LatencySummary, ordinary: LatencySummary) {
        let start = MonotonicClock.now
        var compositor = Compositor<MonotonicClock>(displays: [DisplayConfiguration(id: DisplayID(rawValue: 0))], start: start)
        let display = DisplayID(rawValue: 0)
        let owner = OwnerID(rawValue: 1)
        let vote = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        let boosted = try FrameRateRange(minimum: 120, maximum: 120, preferred: 120)
        let configuration = DisplayLinkConfiguration(range: vote, hasHighFrameRateEntitlement: true)
        var boosters: [LinkID] = []
        for index in 0..<(boostEnds + links) {
            let link = try compositor.register(owner: owner, configuration: configuration, at: start).link
            if index < boostEnds { boosters.append(link) }
        }
        var ending = nanosecondHistogram()
        var ordinary = nanosecondHistogram()
        var now = start
        for _ in 0..<max(1, iterations / 20) {
            // Boosted in reverse id order; all end at the same instant.
            for link in boosters.reversed() {
                _ = try compositor.boost(link: link, owner: owner, duration: .milliseconds(50), range: boosted, at: now)
            }
            // The vsync that ends them is the first whose ticks are no longer boosted (a boost
            // ends at the first vsync at or after its end, on the grid's own rounding).
            while true {
                let vsync = try compositor.nextVsync(of: display)
                let begin = System.monotonicNanoseconds()
                let report = try compositor.vsync(of: display, at: vsync)
                let elapsed = System.monotonicNanoseconds() - begin
                checksum += Double(report.ticks.count)
                now = vsync
                if !report.ticks.contains(where: \.boosted) {
                    _ = ending.record(UInt64(max(elapsed, 1_000)))
                    break
                }
                _ = ordinary.record(UInt64(max(elapsed, 1_000)))
            }
        }
        return (LatencySummary(ending), LatencySummary(ordinary))
    }
}

import FrameRateModel
import FrameRateTesting

/// A compositor on a manual clock with helpers to register links and run vsyncs.
struct Harness {
    let clock = ManualClock()
    var compositor: Compositor<ManualClock>
    let display = DisplayID(rawValue: 0)
    let owner = OwnerID(rawValue: 1)

    init(
        profile: DisplayProfile = .promotionPhone, caps: DisplayCaps = DisplayCaps(), configuredMaximum: Double? = nil,
        governor: RefreshRateGovernor<ManualClock>.Settings = .init()
    ) {
        compositor = Compositor(
            displays: [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: profile, configuredMaximum: configuredMaximum, caps: caps)],
            governor: governor, start: clock.now
        )
    }

    @discardableResult
    mutating func register(
        _ minimum: Double, _ maximum: Double, _ preferred: Double, entitled: Bool = false, paused: Bool = false, label: String? = nil
    ) throws -> LinkStatus {
        let range = try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
        return try compositor.register(
            owner: owner,
            configuration: DisplayLinkConfiguration(range: range, isPaused: paused, hasHighFrameRateEntitlement: entitled, label: label),
            at: clock.now
        )
    }

    /// Steps the clock vsync by vsync for `seconds`, returning every report.
    @discardableResult
    mutating func run(seconds: Double, canDeliver: (OwnerID) -> Bool = { _ in true }) throws -> [VsyncReport<ManualClock.Instant>] {
        let end = clock.now.advanced(by: .seconds(seconds))
        var reports: [VsyncReport<ManualClock.Instant>] = []
        while true {
            let next = try compositor.nextVsync(of: display)
            guard next <= end else { break }
            clock.advance(to: next)
            reports.append(try compositor.vsync(of: display, at: clock.now, canDeliver: canDeliver))
        }
        clock.advance(to: end)
        return reports
    }

    var refreshRate: Double { try! compositor.refreshRate(of: display) }
    var callbackRates: [Double] { compositor.snapshot[0].links.map(\.callbackRate) }
}

/// A small deterministic generator (SplitMix64) so property tests replay exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Dictionary where Key == LinkID {
    /// A key drawn with `rng` from the keys in id order (`nil` when empty). A dictionary's
    /// own order changes with the process's hash seed: drawing from it made a seeded run,
    /// and whether it reached the cases its test must cover, differ from one process to
    /// the next.
    func anyLink(using rng: inout SeededGenerator) -> LinkID? {
        keys.sorted { $0.rawValue < $1.rawValue }.randomElement(using: &rng)
    }
}

import FrameRateModel
import FrameRateTesting
import Testing

/// Residency on a stepped clock: the time at each rate adds up to the uptime, each rate's
/// holders add up to its time, and ended links keep their share.
@Suite("Residency")
struct ResidencyTests {
    /// Checks the two invariants at `now` and returns the entries.
    @discardableResult
    static func checkInvariants(_ harness: Harness, sourceLocation: SourceLocation = #_sourceLocation) -> [ResidencyEntry] {
        let now = harness.clock.now
        let entries = harness.compositor.snapshot(at: now)[0].residency
        let uptime = harness.compositor.start.duration(to: now)
        let total = entries.reduce(Duration.zero) { $0 + $1.time }
        #expect(total <= uptime + .seconds(1.0 / 120) && total >= uptime - .seconds(1.0 / 120), sourceLocation: sourceLocation)
        for entry in entries {
            #expect(entry.heldBy.reduce(Duration.zero) { $0 + $1.time } == entry.time, sourceLocation: sourceLocation)
        }
        return entries
    }

    static func time(_ entries: [ResidencyEntry], rate: Double, holder: ResidencyHolder) -> Duration {
        entries.first { $0.rate == rate }?.heldBy.first { $0.holder == holder }?.time ?? .zero
    }

    @Test("time goes to the deciders in force, caps and idle; the sums add up at every step")
    func scenario() throws {
        var harness = Harness()
        try harness.run(seconds: 0.5)
        // No link: the initial 60 Hz is held by idle.
        var entries = Self.checkInvariants(harness)
        #expect(entries.map(\.rate) == [60])
        #expect(entries[0].heldBy.map(\.holder) == [.idle])
        let scroller = try harness.register(80, 120, 120, entitled: true, label: "scroller").link
        try harness.run(seconds: 2)
        entries = Self.checkInvariants(harness)
        let at120 = Self.time(entries, rate: 120, holder: .link(scroller))
        // 2 s less the wait for the increase's vsync.
        #expect(at120 <= .seconds(2) && at120 >= .seconds(2) - .seconds(1.0 / 60))
        let share = try #require(entries.first { $0.rate == 120 }?.heldBy.first)
        #expect(share.owner == harness.owner && share.label == "scroller")
        // Low Power Mode caps at 60 Hz: the cap holds it.
        _ = try harness.compositor.setCaps(display: nil, at: harness.clock.now) { $0.lowPowerMode = true }
        try harness.run(seconds: 1)
        entries = Self.checkInvariants(harness)
        let capped = Self.time(entries, rate: 60, holder: .cap)
        #expect(capped >= .milliseconds(700) && capped <= .seconds(1))
        _ = try harness.compositor.setCaps(display: nil, at: harness.clock.now) { $0.lowPowerMode = false }
        try harness.run(seconds: 1)
        Self.checkInvariants(harness)
    }

    @Test("two deciders split the time evenly")
    func split() throws {
        var harness = Harness()
        let first = try harness.register(120, 120, 120, entitled: true, label: "a").link
        let second = try harness.register(120, 120, 120, entitled: true, label: "b").link
        try harness.run(seconds: 1)
        let decision = try harness.compositor.decision()
        #expect(Set(decision.deciders) == [first, second])
        let entries = Self.checkInvariants(harness)
        let a = Self.time(entries, rate: 120, holder: .link(first))
        let b = Self.time(entries, rate: 120, holder: .link(second))
        #expect(a > .zero)
        // Equal up to the division's remainder (attoseconds).
        #expect(a - b < .nanoseconds(1) && b - a < .nanoseconds(1))
    }

    @Test("an ended link keeps its share and its identity as it was")
    func endedLinksKeepTheirShare() throws {
        var harness = Harness()
        let link = try harness.register(80, 120, 120, entitled: true, label: "video").link
        try harness.run(seconds: 1)
        let before = Self.time(Self.checkInvariants(harness), rate: 120, holder: .link(link))
        try harness.compositor.invalidate(link: link, owner: harness.owner, at: harness.clock.now)
        try harness.run(seconds: 3)
        let entries = Self.checkInvariants(harness)
        let share = try #require(entries.first { $0.rate == 120 }?.heldBy.first { $0.holder == .link(link) })
        // Once no link votes, the idle timeout holds the rate, not the ended link.
        #expect(share.time == before)
        #expect(Self.time(entries, rate: 120, holder: .idle) >= .seconds(1))
        #expect(share.owner == harness.owner && share.label == "video")
        // Then the display idled down: the idle holder holds the lower rates.
        #expect(entries.contains { $0.rate < 120 && $0.heldBy.contains { $0.holder == .idle } })
    }

    @Test("past 256 ended links, the smallest are merged into one ended entry")
    func endedLinksAreBounded() throws {
        var harness = Harness()
        for index in 0..<300 {
            let link = try harness.register(80, 120, 120, entitled: true, label: "burst \(index)").link
            try harness.run(seconds: 0.02)
            try harness.compositor.invalidate(link: link, owner: harness.owner, at: harness.clock.now)
        }
        try harness.run(seconds: 1)
        let entries = Self.checkInvariants(harness)
        let named = Set(entries.flatMap(\.heldBy).compactMap { share -> LinkID? in
            if case .link(let link) = share.holder { return link }
            return nil
        })
        #expect(named.count <= 256)
        #expect(entries.contains { $0.heldBy.contains { $0.holder == .ended && $0.time > .zero } })
    }

    @Test("the owners residency names are the owners of its entries' shares, without a snapshot, also once ended links merge")
    func ownersNamedByResidency() throws {
        var harness = Harness()
        func ownersInEntries() -> Set<OwnerID> {
            Set(harness.compositor.snapshot(at: harness.clock.now)[0].residency.flatMap(\.heldBy).compactMap(\.owner))
        }
        for index in 0..<300 {
            let owner = OwnerID(rawValue: UInt64(100 + index))
            let range = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
            let link = try harness.compositor.register(
                owner: owner, configuration: DisplayLinkConfiguration(range: range, hasHighFrameRateEntitlement: true, label: "burst \(index)"),
                at: harness.clock.now
            ).link
            try harness.run(seconds: 0.02)
            if index < 299 { try harness.compositor.invalidate(link: link, owner: owner, at: harness.clock.now) }
            if index == 10 || index == 299 { #expect(harness.compositor.ownersNamedByResidency == ownersInEntries()) }
        }
        try harness.run(seconds: 1)
        let named = harness.compositor.ownersNamedByResidency
        #expect(named == ownersInEntries())
        #expect(named.count <= 257 && named.contains(OwnerID(rawValue: 399)), "merged owners are forgotten; the live one is named")
    }
}

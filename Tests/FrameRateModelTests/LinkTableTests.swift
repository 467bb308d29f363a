import FrameRateTesting
import Testing

@testable import FrameRateModel

/// ``LinkTable``: a display's links keep their slots while others come and go, and every
/// pass over them (ticks, snapshots, handover checkpoints) still sees registration order.
@Suite struct LinkTableTests {
    static func link(_ id: UInt64, owner: UInt64 = 1) throws -> DisplayLinkState {
        let range = try FrameRateRange(minimum: 60, maximum: 120, preferred: 120)
        return DisplayLinkState(
            id: LinkID(rawValue: id), owner: OwnerID(rawValue: owner), configuration: DisplayLinkConfiguration(range: range),
            pacer: LinkPacer(cadence: CallbackCadence(range: range, refresh: 120)), since: .zero,
            presentation: LinkPresentation(since: .zero, paused: false)
        )
    }

    static func ids(_ table: LinkTable) -> [UInt64] { table.map(\.id.rawValue) }

    @Test("a link keeps its slot while others go; a freed slot is reused, and the newcomer comes last")
    func slotsStayAndOrderHolds() throws {
        var table = LinkTable()
        for id in 1...5 { table.append(try Self.link(UInt64(id))) }
        let slotOfFour = try #require(table.slot(of: LinkID(rawValue: 4)))
        #expect(table.remove([LinkID(rawValue: 2)]) == [LinkID(rawValue: 2)])
        #expect(table.slot(of: LinkID(rawValue: 4)) == slotOfFour, "removing link 2 moved link 4")
        #expect(table[slotOfFour].id == LinkID(rawValue: 4))
        #expect(!table.contains(LinkID(rawValue: 2)))
        #expect(Self.ids(table) == [1, 3, 4, 5])

        let freed = 1  // link 2's slot: links 1 to 5 took slots 0 to 4
        let slotOfSix = table.append(try Self.link(6))
        #expect(slotOfSix == freed, "the freed slot is reused")
        #expect(Self.ids(table) == [1, 3, 4, 5, 6], "a link in a reused slot still comes last")
        #expect(table.count == 5)
        #expect(table.order.map(Int.init) == [0, 2, 3, 4, 1])
    }

    @Test("removing many links returns those it held, in the order asked, and ignores the rest")
    func removeMany() throws {
        var table = LinkTable()
        for id in 1...6 { table.append(try Self.link(UInt64(id))) }
        let removed = table.remove([5, 9, 1, 3, 5].map { LinkID(rawValue: $0) })
        #expect(removed.map(\.rawValue) == [5, 1, 3])
        #expect(Self.ids(table) == [2, 4, 6])
        #expect(table.remove([LinkID(rawValue: 7)]).isEmpty)
        #expect(table.remove([2, 4, 6].map { LinkID(rawValue: $0) }).count == 3)
        #expect(table.isEmpty && Self.ids(table).isEmpty)
        // Every slot is free now; three new links reuse three of them, in registration order.
        for id in 10...12 { table.append(try Self.link(UInt64(id))) }
        #expect(Self.ids(table) == [10, 11, 12])
    }

    /// An owner's links on two displays go together, from each display in registration
    /// order, and the others' links keep their order: on the compositor that registered
    /// them, and on one restored from its handover checkpoint after some had gone.
    @Test("closing an owner's links on two displays, before and after a handover")
    func removeAcrossDisplaysAndAfterRestore() throws {
        let clock = ManualClock()
        let configurations = [0, 1].map { DisplayConfiguration(id: DisplayID(rawValue: $0), profile: .promotionPhone) }
        var compositor = Compositor<ManualClock>(displays: configurations, start: clock.now)
        let range = try FrameRateRange(minimum: 60, maximum: 120, preferred: 120)
        let (first, second) = (OwnerID(rawValue: 1), OwnerID(rawValue: 2))
        var registered: [(link: LinkID, owner: OwnerID, display: Int)] = []
        for (owner, display) in [(first, 0), (second, 1), (first, 1), (second, 0), (first, 0), (second, 1), (first, 1), (second, 0)] as [(OwnerID, Int)] {
            let status = try compositor.register(
                owner: owner, display: DisplayID(rawValue: display), configuration: DisplayLinkConfiguration(range: range), at: clock.now
            )
            registered.append((status.link, owner, display))
        }
        func links(_ compositor: Compositor<ManualClock>, _ display: Int) -> [LinkID] { compositor.snapshot[display].links.map(\.link) }
        func expected(_ owners: Set<OwnerID>, _ display: Int) -> [LinkID] {
            registered.filter { owners.contains($0.owner) && $0.display == display }.map(\.link)
        }

        var closed = compositor
        let removed = closed.removeLinks(of: first, at: clock.now)
        #expect(removed == expected([first], 0) + expected([first], 1), "display 0's first, each in registration order")
        #expect(links(closed, 0) == expected([second], 0) && links(closed, 1) == expected([second], 1))
        #expect(closed.removeLinks(of: first, at: clock.now).isEmpty)

        // One of the second owner's links goes before the handover, freeing a slot.
        let gone = expected([second], 1)[0]
        try compositor.invalidate(link: gone, owner: second, at: clock.now)
        registered.removeAll { $0.link == gone }
        var restored = try Compositor<ManualClock>(restoring: compositor.checkpoint, displays: configurations, start: compositor.start)
        #expect(links(restored, 0) == expected([first, second], 0) && links(restored, 1) == expected([first, second], 1))
        let removedAfter = restored.removeLinks(of: second, at: clock.now)
        #expect(removedAfter == expected([second], 0) + expected([second], 1))
        #expect(links(restored, 0) == expected([first], 0) && links(restored, 1) == expected([first], 1))
        let newcomer = try restored.register(owner: second, display: DisplayID(rawValue: 1), configuration: DisplayLinkConfiguration(range: range), at: clock.now)
        #expect(links(restored, 1) == expected([first], 1) + [newcomer.link], "a newcomer in a freed slot comes last")
    }

    /// Random registrations, invalidations and closed connections over four owners; after
    /// each step the snapshot, a vsync's ticks and the handover checkpoint list exactly the
    /// live links in registration order, as a plain list kept beside them does.
    @Test("the compositor's passes see registration order through any churn", arguments: [1, 2, 3] as [UInt64])
    func registrationOrderThroughChurn(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var harness = Harness()
        var expected: [(link: LinkID, owner: OwnerID)] = []
        let range = try FrameRateRange(minimum: 120, maximum: 120, preferred: 120)
        var everyLinkTicked = 0
        for _ in 0..<300 {
            let owner = OwnerID(rawValue: UInt64.random(in: 1...4, using: &generator))
            switch UInt64.random(in: 0..<10, using: &generator) {
            case 0..<6:
                let status = try harness.compositor.register(
                    owner: owner, configuration: DisplayLinkConfiguration(range: range, hasHighFrameRateEntitlement: true), at: harness.clock.now
                )
                expected.append((status.link, owner))
            case 6..<9:
                guard let victim = expected.indices.filter({ expected[$0].owner == owner }).randomElement(using: &generator) else { continue }
                try harness.compositor.invalidate(link: expected[victim].link, owner: owner, at: harness.clock.now)
                expected.remove(at: victim)
            default:
                let removed = harness.compositor.removeLinks(of: owner, at: harness.clock.now)
                #expect(removed == expected.filter { $0.owner == owner }.map(\.link), "removed in registration order")
                expected.removeAll { $0.owner == owner }
            }
            let order = expected.map(\.link)
            #expect(harness.compositor.snapshot[0].links.map(\.link) == order)
            #expect(harness.compositor.checkpoint.displays[0].links.map(\.link) == order)
            let next = try harness.compositor.nextVsync(of: harness.display)
            harness.clock.advance(to: next)
            let report = try harness.compositor.vsync(of: harness.display, at: harness.clock.now) { _ in true }
            // Every link is unpaused at 120 Hz on a 120 Hz grid once it settles; a new one may
            // wait a vsync, so compare the order of those that ticked.
            let ticked = report.ticks.map(\.link)
            #expect(ticked == order.filter { ticked.contains($0) })
            if !order.isEmpty && ticked == order { everyLinkTicked += 1 }
            #expect(try harness.compositor.linkCount(of: harness.display) == order.count)
        }
        // The order check above compares whole vsyncs, not an empty list, most of the time.
        #expect(everyLinkTicked >= 150, "every link ticked at only \(everyLinkTicked) of 300 vsyncs")
    }
}

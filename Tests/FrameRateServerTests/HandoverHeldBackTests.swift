import FrameRateModel
import FrameRateProtocol
import Testing
@testable import FrameRateServer

/// A restart handover keeps how long a link has waited for its client's frame, and whether
/// the wait was logged: the new daemon neither shows a wait from its own start nor logs a
/// wait again (``LinkPacer/noteHeldBack(at:)``).
@Suite("Restart handover: a link held back for its frame")
struct HandoverHeldBackTests {
    static let displays = [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .fixed60)]
    static let display = DisplayID(rawValue: 0)
    static let owner = OwnerID(rawValue: 1 << 32 | 1)

    /// A 60 Hz link that answered tick 1, then left tick 2 unanswered for `seconds`.
    static func waiting(seconds: Double) throws -> (Compositor<MonotonicClock>, Tick<MonotonicClock.Instant>, MonotonicClock.Instant, [HeldBackLink]) {
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        var compositor = Compositor<MonotonicClock>(displays: displays, start: start)
        let configuration = DisplayLinkConfiguration(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60))
        let link = try compositor.register(owner: owner, configuration: configuration, at: start).link
        var at = try #require(try compositor.nextEventfulVsync(of: display))
        _ = try compositor.vsync(of: display, at: at)
        try compositor.frameDone(link: link, owner: owner, sequence: 1)
        at = try #require(try compositor.nextEventfulVsync(of: display))
        let unanswered = try #require(try compositor.vsync(of: display, at: at).ticks.first)
        var heldBack: [HeldBackLink] = []
        while at < unanswered.timestamp.advanced(by: .seconds(seconds)) {
            at = try #require(try compositor.nextEventfulVsync(of: display))
            heldBack += try compositor.vsync(of: display, at: at).heldBack
        }
        return (compositor, unanswered, at, heldBack)
    }

    static func restored(_ compositor: Compositor<MonotonicClock>, dropping fields: [String] = []) throws -> Compositor<MonotonicClock> {
        var text = String(
            decoding: HandoverSnapshot(
                start: 1_000_000_000, takenAt: 0, compositor: compositor.checkpoint, sessions: [], lastWatch: 0, ownerGeneration: 1
            ).encoded(), as: UTF8.self
        )
        for field in fields {
            guard let range = text.firstRange(of: try Regex(",\"\(field)\":(\\[[^\\]]*\\]|true|false|null)")) else {
                throw TestFailure("no \(field) in the snapshot")
            }
            text.removeSubrange(range)
        }
        let decoded = try HandoverSnapshot(decoding: Array(text.utf8))
        return try Compositor<MonotonicClock>(
            restoring: decoded.compositor, displays: displays, start: MonotonicClock.Instant(nanoseconds: decoded.start)
        )
    }

    @Test("a wait already logged is not logged again, and its tick time survives to the attosecond")
    func aLoggedWaitStaysLogged() throws {
        let (compositor, unanswered, at, heldBack) = try Self.waiting(seconds: 1.5)
        #expect(heldBack.count == 1)
        var restored = try Self.restored(compositor)
        let link = unanswered.link
        let awaited = try #require(restored.snapshot(of: link)?.awaitedFrame)
        #expect(awaited == compositor.snapshot(of: link)?.awaitedFrame)
        #expect(restored.start.advanced(by: awaited.tickTime) == unanswered.timestamp)
        var next = at
        for _ in 0..<120 {
            next = try #require(try restored.nextEventfulVsync(of: Self.display))
            #expect(try restored.vsync(of: Self.display, at: next).heldBack.isEmpty)
        }
    }

    @Test("a reported wait is listed after the handover, and its end is reported with the tick it waited for")
    func aReportedWaitEndsAfterTheHandover() throws {
        let (compositor, unanswered, _, heldBack) = try Self.waiting(seconds: 1.5)
        #expect(heldBack.count == 1)
        var restored = try Self.restored(compositor)
        let link = unanswered.link
        // What the new daemon's control loop reads to announce the wait's end.
        #expect(restored.reportedWaits.map(\.link) == [link] && restored.reportedWaits.map(\.awaited) == [unanswered.sequence])
        try restored.frameDone(link: link, owner: Self.owner, sequence: unanswered.sequence)
        let next = try #require(try restored.nextEventfulVsync(of: Self.display))
        let report = try restored.vsync(of: Self.display, at: next)
        let resumed = try #require(report.resumed.first)
        #expect(report.resumed.count == 1 && resumed.link == link && resumed.awaited == unanswered.sequence)
        #expect(resumed.sequence == report.ticks.first?.sequence && resumed.waited == unanswered.timestamp.duration(to: next))
        #expect(restored.reportedWaits.isEmpty)
    }

    @Test("a wait not yet logged is logged by the new daemon, measured from the tick, not from its start")
    func aWaitNotYetLoggedIsLoggedOnce() throws {
        let (compositor, unanswered, _, heldBack) = try Self.waiting(seconds: 0.5)
        #expect(heldBack.isEmpty)
        var restored = try Self.restored(compositor)
        var reported: [HeldBackLink] = []
        while reported.isEmpty {
            let next = try #require(try restored.nextEventfulVsync(of: Self.display))
            reported = try restored.vsync(of: Self.display, at: next).heldBack
            #expect(next < unanswered.timestamp.advanced(by: .seconds(2)), "never reported")
            if next >= unanswered.timestamp.advanced(by: .seconds(2)) { break }
        }
        let held = try #require(reported.first)
        #expect(held.frame.sequence == unanswered.sequence)
        #expect(held.waited >= .seconds(1) && held.waited < .seconds(1) + .milliseconds(17))
    }

    @Test("from a daemon that did not record them, the wait is measured from the latest interval's end: never longer than it was")
    func anOlderSnapshotMeasuresFromTheLatestInterval() throws {
        let (compositor, unanswered, at, _) = try Self.waiting(seconds: 0.5)
        let restored = try Self.restored(compositor, dropping: ["lastDeliveredTime", "lastDeliveredInterval", "heldBackReported"])
        let awaited = try #require(restored.snapshot(of: unanswered.link)?.awaitedFrame)
        // The vsync after the last one processed before the handover (the grid's period is
        // exact to the attosecond, so within a nanosecond of 1/60 s after it).
        let since = restored.start.advanced(by: awaited.tickTime)
        #expect(abs(at.advanced(by: .nanoseconds(16_666_667)).duration(to: since) / .nanoseconds(1)) <= 1)
        #expect(restored.start.advanced(by: awaited.tickTime) > unanswered.timestamp)
    }
}

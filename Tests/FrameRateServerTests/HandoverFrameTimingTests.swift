import FrameRateModel
import FrameRateProtocol
import Testing
@testable import FrameRateServer

/// A restart handover keeps each link's `timelines` and `preferredFrameLatency`, and the
/// display's vsync ids continue across it (issue 14 §1: vsyncId survives a handover).
@Suite("Restart handover: frame timing")
struct HandoverFrameTimingTests {
    static let displays = [DisplayConfiguration(id: DisplayID(rawValue: 0))]
    static let display = DisplayID(rawValue: 0)

    /// A compositor with one 120 Hz link asking for 5 timelines at latency 2, run for 20 vsyncs;
    /// returns it and the last tick.
    static func running() throws -> (Compositor<MonotonicClock>, Tick<MonotonicClock.Instant>, MonotonicClock.Instant) {
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        var compositor = Compositor<MonotonicClock>(displays: displays, start: start)
        var configuration = DisplayLinkConfiguration(range: try FrameRateRange(minimum: 120, maximum: 120, preferred: 120), hasHighFrameRateEntitlement: true)
        configuration.timelines = 5
        configuration.frameLatency = 2
        _ = try compositor.register(owner: OwnerID(rawValue: 1 << 32 | 1), configuration: configuration, at: start)
        var at = start
        var last: Tick<MonotonicClock.Instant>?
        for _ in 0..<20 {
            at = try #require(try compositor.nextEventfulVsync(of: display))
            last = try compositor.vsync(of: display, at: at).ticks.last ?? last
        }
        return (compositor, try #require(last), at)
    }

    @Test("timelines and preferredFrameLatency round-trip through the snapshot, and vsync ids continue after the restore")
    func roundTrip() throws {
        let (compositor, before, at) = try Self.running()
        let snapshot = HandoverSnapshot(
            start: 1_000_000_000, takenAt: at.nanoseconds, compositor: compositor.checkpoint, sessions: [], lastWatch: 0, ownerGeneration: 1
        )
        let text = String(decoding: snapshot.encoded(), as: UTF8.self)
        #expect(text.contains(#""timelines":5"#) && text.contains(#""preferredFrameLatency":2"#))
        let decoded = try HandoverSnapshot(decoding: snapshot.encoded())
        #expect(decoded == snapshot)
        let link = try #require(decoded.compositor.displays[0].links.first)
        #expect(link.configuration.timelines == 5 && link.configuration.frameLatency == 2)
        var restored = try Compositor<MonotonicClock>(
            restoring: decoded.compositor, displays: Self.displays, start: MonotonicClock.Instant(nanoseconds: decoded.start)
        )
        var after: Tick<MonotonicClock.Instant>?
        while after == nil {
            let next = try #require(try restored.nextEventfulVsync(of: Self.display))
            after = try restored.vsync(of: Self.display, at: next).ticks.first
        }
        let beforeIDs = before.timelines(sentAt: before.timestamp).map(\.vsyncID)
        let afterIDs = try #require(after).timelines(sentAt: after!.timestamp).map(\.vsyncID)
        #expect(afterIDs.count == 5 && beforeIDs.count == 5)
        #expect(afterIDs[0] > beforeIDs[0])
        #expect(after!.frameLatency == 2)
    }

    @Test("a snapshot from a daemon without the fields means 1 and 1; out-of-range values are named by their path")
    func olderAndMalformed() throws {
        let (compositor, _, at) = try Self.running()
        let text = String(
            decoding: HandoverSnapshot(
                start: 1_000_000_000, takenAt: at.nanoseconds, compositor: compositor.checkpoint, sessions: [], lastWatch: 0, ownerGeneration: 1
            ).encoded(), as: UTF8.self
        )
        let older = text.replacing(#""timelines":5,"#, with: "").replacing(#""preferredFrameLatency":2,"#, with: "")
        #expect(!older.contains("timelines"))
        let link = try #require(try HandoverSnapshot(decoding: Array(older.utf8)).compositor.displays[0].links.first)
        #expect(link.configuration.timelines == 1 && link.configuration.frameLatency == 1)
        #expect(throws: HandoverSnapshotError.malformed(field: "displays[0].links[0].timelines")) {
            try HandoverSnapshot(decoding: Array(text.replacing(#""timelines":5"#, with: #""timelines":9"#).utf8))
        }
        #expect(throws: HandoverSnapshotError.malformed(field: "displays[0].links[0].preferredFrameLatency")) {
            try HandoverSnapshot(decoding: Array(text.replacing(#""preferredFrameLatency":2"#, with: #""preferredFrameLatency":0"#).utf8))
        }
    }
}

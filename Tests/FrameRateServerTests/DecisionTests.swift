import FrameRateModel
import FrameRateProtocol
import Logging
import Synchronization
import Testing

@testable import FrameRateServer

/// The `decision` object in every place issue 11 lists, from a real control plane and
/// tick plane over a stepped clock.
@Suite struct DecisionWireTests {
    static let start = MonotonicClock.Instant(seconds: 1000)

    @Test func registerCarriesTheDecisionAndTheLinksOwnLimit() throws {
        let server = ServerHarness(start: Self.start)
        let client = try server.connect()
        // Link 1 (80, 120, 0) without the entitlement, link 2 (80, 120, 120) with it: link 2 holds 120 Hz.
        let first = try client.result(.register, #"{"range":{"minimum":80,"maximum":120}}"#)
        #expect(first["limitedBy"] == "entitlement" && first["wanted"] == 120.0 && first["got"] == 60.0)
        #expect(first["decision"]?["rule"] == "exact" && first["decision"]?["rate"] == 60.0)
        let second = try client.result(.register, #"{"range":{"minimum":80,"maximum":120,"preferred":120},"highFrameRate":true}"#)
        #expect(second["limitedBy"] == .null && second["wanted"] == .null && second["got"] == .null)
        let decision = try DecisionState(json: try #require(second["decision"]))
        #expect(decision.rate == 120 && decision.rule == .exact)
        #expect(decision.deciders == [LinkID(rawValue: 2)] && decision.deciderCount == 1)
        #expect(decision.cap == nil)
        #expect(decision.limited == [LinkLimit(link: LinkID(rawValue: 1), by: .entitlement, wanted: 120, got: 60)])
        // The display still runs at 60 Hz: the increase is pending for the next vsync, on CLOCK_MONOTONIC.
        let pending = try #require(decision.pending)
        #expect(pending.rate == 120)
        #expect(pending.at == (try server.compositor.nextVsync(of: DisplayID(rawValue: 0))).seconds)
        #expect(second["decision"]?["pending"]?["at"]?.numberValue?.text == WireTime.format(nanoseconds: try server.compositor.nextVsync(of: DisplayID(rawValue: 0)).nanoseconds))
        // After the vsync the change is in force: no pending change any more.
        try server.runNextVsync()
        let state = try CompositorState(json: try client.result(.getState))
        #expect(state.displays[0].decision?.pending == nil)
        #expect(state.displays[0].decision?.deciders == [LinkID(rawValue: 2)])
    }

    @Test func updateCarriesTheDecisionUnderACap() throws {
        let server = ServerHarness(start: Self.start)
        let admin = try server.connect(Peers.root)
        let client = try server.connect()
        let link = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        _ = try admin.result(.setCaps, #"{"lowPowerMode":true}"#)
        let result = try client.result(.update, #"{"link":\#(link),"range":{"minimum":80,"maximum":120,"preferred":120}}"#)
        #expect(result["limitedBy"] == "cap" && result["wanted"] == 120.0 && result["got"] == 60.0)
        let decision = try DecisionState(json: try #require(result["decision"]))
        #expect(decision.rule == .cap && decision.rate == 60 && decision.deciders.isEmpty)
        #expect(decision.cap == DecisionCap(source: .lowPower, hz: 60))
        #expect(decision.limited == [LinkLimit(link: LinkID(rawValue: link), by: .cap, wanted: 120, got: 60)])
        #expect(decision.reason.contains("Low Power Mode"))
    }

    @Test func getStateShowsEachDisplaysDecisionAndEachLinksSince() throws {
        let server = ServerHarness(start: Self.start)
        let client = try server.connect(Peers.user)
        _ = try client.register(30, 60, 60)
        server.clock.advance(by: .milliseconds(250))
        _ = try client.register(80, 120, 0)
        let state = try CompositorState(json: try client.result(.getState))
        let display = state.displays[0]
        #expect(display.links.map(\.since) == [1000, 1000.25])
        #expect(display.links.map(\.limit) == [nil, LinkLimit(link: LinkID(rawValue: 2), by: .entitlement, wanted: 120, got: 60)])
        let decision = try #require(display.decision)
        #expect(decision.rate == 60 && decision.rule == .exact)
        #expect(decision.limited.map(\.link) == [LinkID(rawValue: 2)])
        // The same bytes while nothing changes (the per-generation cache), new ones after a change.
        let again = try client.request(.getState)
        #expect(again == (try client.request(.getState)))
    }

    @Test func aRateChangeEventCarriesTheDecisionWithoutPendingAndItsTime() throws {
        let server = ServerHarness(start: Self.start)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        _ = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        _ = try watcher.lines()
        let vsync = try server.runNextVsync()
        let events = try watcher.lines().map { try notificationParams($0, .event) }
        let change = try #require(events.first { $0["kind"] == "refreshRateChanged" })
        #expect(change["at"]?.numberValue?.text == WireTime.format(nanoseconds: vsync.nanoseconds))
        let decision = try DecisionState(json: try #require(change["decision"]))
        #expect(decision.rate == 120 && decision.rule == .exact && decision.deciders == [LinkID(rawValue: 1)])
        #expect(decision.pending == nil)
        #expect(change["decision"]?["pending"] == .null)
        guard case .refreshRateChanged(_, 60, 120, let reason, let typed?, let at?) = try CompositorEvent(params: change) else {
            Issue.record("not a typed rate change: \(change.jsonString)")
            return
        }
        #expect(typed == decision && at == vsync.seconds && reason == decision.reason)
    }

    @Test func theIdleDropIsAnEventWithTheIdleRule() throws {
        let server = ServerHarness(start: Self.start)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        let link = try client.register(30, 60, 60)
        _ = try client.result(.invalidate, #"{"link":\#(link)}"#)
        let state = try CompositorState(json: try client.result(.getState))
        let pending = try #require(state.displays[0].decision?.pending)
        #expect(pending.rate == 10 && state.displays[0].decision?.rule == .idle)
        _ = try watcher.lines()
        var seen: JSONValue?
        for _ in 0..<200 where seen == nil {
            try server.runNextVsync()
            seen = try watcher.lines().map { try notificationParams($0, .event) }.first { $0["kind"] == "refreshRateChanged" }
        }
        let change = try #require(seen)
        #expect(change["to"] == 10.0 && change["decision"]?["rule"] == "idle" && change["decision"]?["deciders"] == [])
        // It happened at the vsync the pending change named.
        #expect(abs((change["at"]?.doubleValue ?? 0) - pending.at) < 1e-6)
    }

    @Test func theRateChangeLogEntryCarriesRuleDecidersAndCap() throws {
        let server = ServerHarness(start: Self.start)
        let log = RecordingLogHandler()
        server.core.logger = Logger(label: "framerated-test", factory: { _ in log })
        let admin = try server.connect(Peers.root)
        let client = try server.connect()
        _ = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        _ = try admin.result(.setCaps, #"{"thermalState":"serious"}"#)
        _ = try admin.result(.setCaps, #"{"thermalState":"nominal"}"#)
        try server.runNextVsync()
        let change = try #require(log.entries.map(\.metadata).first { $0["event"] == "refresh-rate-changed" })
        // JournalLogHandler turns these keys into FRAMERATED_RULE, FRAMERATED_DECIDERS and FRAMERATED_CAP.
        #expect(change["rule"] == "exact" && change["deciders"] == "1" && change["cap"] == "none")
        #expect(change["to_hz"] == "120")

        _ = try admin.result(.setCaps, #"{"lowPowerMode":true}"#)
        for _ in 0..<100 where log.entries.filter({ $0.metadata["event"] == "refresh-rate-changed" }).count < 2 { try server.runNextVsync() }
        let capped = try #require(log.entries.map(\.metadata).last { $0["event"] == "refresh-rate-changed" })
        #expect(capped["rule"] == "cap" && capped["deciders"] == "none" && capped["cap"] == "lowPower 60 Hz" && capped["to_hz"] == "60")
    }

    @Test func journalListsOfLinks() {
        #expect(CompositorCore.journalList([], count: 0) == "none")
        #expect(CompositorCore.journalList([LinkID(rawValue: 3), LinkID(rawValue: 7)], count: 2) == "3 7")
        #expect(CompositorCore.journalList([LinkID(rawValue: 3)], count: 5) == "3 (+4 more)")
    }
}

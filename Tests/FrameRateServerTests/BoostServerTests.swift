import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import FrameRateServer

/// `DisplayLink/Boost` and `adaptive` through the daemon's dispatcher and tick plane, on
/// the stepped clock: the reply, the `boosted` ticks on the wire, the wake-up at the
/// boost's end, who may boost, and the step-down reported in the decision.
@Suite struct BoostServerTests {
    @Test func aBoostRaisesTheRateMarksTheTicksAndEndsAtItsInstant() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(10, 120, 60, extra: #","highFrameRate":true"#)
        try server.runNextVsync()
        _ = try client.lines()
        let boostedAt = server.clock.now
        let result = try BoostResult(json: try client.result(.boost, #"{"link":\#(link),"duration":0.5}"#))
        #expect(result.status.refreshRate == 120)
        #expect(result.status.callbackRate == 120)
        #expect(result.status.decision?.reason.contains("boosted") == true)
        let end = boostedAt.advanced(by: .milliseconds(500))
        #expect(abs(result.boostedUntil - end.seconds) < 1e-9)

        // Boosted ticks carry "boosted":true, in the encoder's canonical place.
        try server.runNextVsync()
        let boostedLines = try client.lines()
        let boostedLine = try #require(boostedLines.first)
        #expect(boostedLine.contains(#","boosted":true,"targetPresentationTimestamp":"#))
        let scanned = try #require(Array(boostedLine.utf8).withUnsafeBytes { TickLineScanner.scan($0) })
        #expect(scanned.boosted)
        #expect(try TickNotification(json: notificationParams(boostedLine, .tick)).boosted)

        // Run past the end: the tick plane wakes at the first vsync at or after it, and no
        // tick from then on is boosted; the rate drops once the dwell after the end passes.
        var lastRate = 120.0
        var unboosted: [TickNotification] = []
        while server.clock.now < end.advanced(by: .milliseconds(400)) {
            try server.runNextVsync()
            for line in try client.lines() {
                let tick = try TickNotification(json: notificationParams(line, .tick))
                let time = MonotonicClock.Instant(seconds: tick.timestamp)
                // (Tick times are whole nanoseconds: a vsync within 1 µs of the end may fall either side.)
                if abs(time.seconds - end.seconds) > 1e-6 {
                    #expect(tick.boosted == (time < end), "tick at \(tick.timestamp), boost ends at \(end.seconds)")
                }
                if !tick.boosted { unboosted.append(tick) }
                lastRate = tick.refreshRate
            }
        }
        #expect(!unboosted.isEmpty)
        #expect(lastRate == 60)
        let drop = try #require(unboosted.first { $0.refreshRate == 60 })
        #expect(drop.timestamp >= end.advanced(by: .milliseconds(250)).seconds - 1e-9)
    }

    @Test func theTickPlaneWakesAtABoostsEndEvenWhenNothingElseIsDue() throws {
        // One fixed 60 Hz display and a paused link: nothing is due, the tick plane sleeps.
        let server = ServerHarness(displays: [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .fixed60)])
        let start = server.clock.now
        let client = try server.connect()
        let link = try client.register(10, 60, 60, extra: #","paused":true"#)
        #expect(server.nextWake == nil)
        server.clock.set(start.advanced(by: .milliseconds(10)))
        _ = try BoostResult(json: try client.result(.boost, #"{"link":\#(link),"duration":0.1}"#))
        // The boost ends at 110 ms: the first vsync at or after it is the 7th (116.7 ms).
        let wake = try #require(server.nextWake)
        let period = Duration.seconds(1.0 / 60)
        #expect(wake >= start.advanced(by: .milliseconds(110)))
        #expect(wake < start.advanced(by: .milliseconds(110)).advanced(by: period))
        try server.runNextVsync()
        #expect(server.nextWake == nil)
    }

    @Test func durationsOutsideZeroToFiveSecondsAreRefusedNamingTheField() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(10, 120, 60)
        for bad in ["0", "-1", "5.000001", "1e9", #""1""#, "null"] {
            let error = try client.error(.boost, #"{"link":\#(link),"duration":\#(bad)}"#)
            #expect(error.code == -32602, "duration \(bad)")
            #expect(error.message.contains("duration"), "duration \(bad): \(error.message)")
        }
        let missing = try client.error(.boost, #"{"link":\#(link)}"#)
        #expect(missing.code == -32602)
        let badRange = try client.error(.boost, #"{"link":\#(link),"duration":1,"range":{"minimum":90,"maximum":80}}"#)
        #expect(badRange.code == -32602)
        #expect(badRange.message.contains("invalid range"))
        // The longest allowed boost is accepted.
        _ = try BoostResult(json: try client.result(.boost, #"{"link":\#(link),"duration":5}"#))
    }

    @Test func anotherConnectionOfTheSameUserMayBoostAnotherUsersMayNot() throws {
        let server = ServerHarness()
        let owner = try server.connect(Peers.user)
        let link = try owner.register(10, 120, 60, extra: #","highFrameRate":true"#)
        let sameUser = try server.connect(Peers.user)
        let result = try BoostResult(json: try sameUser.result(.boost, #"{"link":\#(link),"duration":1}"#))
        #expect(result.status.refreshRate == 120)
        let strangerUID: UInt32 = Peers.user.uid &+ 7 == geteuid() ? Peers.user.uid &+ 8 : Peers.user.uid &+ 7
        let stranger = try server.connect(PeerCredentials(pid: 404, uid: strangerUID, gid: strangerUID, groups: [100], command: "other"))
        let refused = try stranger.error(.boost, #"{"link":\#(link),"duration":1}"#)
        #expect(refused.grpcStatus == .notFound)
        let unknown = try sameUser.error(.boost, #"{"link":999,"duration":1}"#)
        #expect(unknown.grpcStatus == .notFound)
    }

    @Test func anAdaptiveLinkThatKeepsOverrunningIsSteppedDownAndTheDecisionSaysSo() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(120, 120, 120, extra: #","highFrameRate":true,"adaptive":true"#)
        var stepped = false
        for _ in 0..<200 where !stepped {
            try server.runNextVsync()
            for line in try client.lines() {
                let tick = try TickNotification(json: notificationParams(line, .tick))
                // The frame takes 12 ms from its tick (1 ms for the first, so pacing starts).
                let took: Duration = tick.sequence == 1 ? .milliseconds(1) : .milliseconds(12)
                server.step(to: MonotonicClock.Instant(seconds: tick.timestamp).advanced(by: took))
                _ = try client.lines()
                _ = try client.result(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#)
                let decisionJSON = try #require(server.core.currentState(for: Viewer(scope: .everyone)).jsonValue["displays"]?[0]?["decision"])
                stepped = !(try DecisionState(json: decisionJSON)).limited.isEmpty
            }
        }
        #expect(stepped)
        let decisionJSON = try #require(server.core.currentState(for: Viewer(scope: .everyone)).jsonValue["displays"]?[0]?["decision"])
        let decision = try DecisionState(json: decisionJSON)
        #expect(decision.limited == [LinkLimit(link: LinkID(rawValue: link), by: .overrun, wanted: 120, got: 60)])
        let after = try client.result(.update, #"{"link":\#(link)}"#)
        #expect(after["callbackRate"]?.doubleValue == 60)
        #expect(after["limitedBy"]?.stringValue == "overrun")
    }

    @Test("two rate changes at one late vsync reach a watcher as two events, in the order they took effect")
    func twoChangesAtOneLateVsyncAreTwoEvents() throws {
        // With no decrease dwell, the holder's pause makes a decrease to the boosted 80 Hz
        // due at the next vsync; the tick plane wakes 52 ms after it, past the boost's end
        // too, which drops the rate to 30 Hz at the vsync it wakes for (BoostTimingTests
        // checks the model's side).
        let server = ServerHarness(governor: .init(decreaseDwell: .zero))
        let watcher = try server.connect()
        _ = try watcher.result(.watch, "{}")
        let client = try server.connect()
        let holder = try client.register(120, 120, 120, extra: #","highFrameRate":true"#)
        _ = try client.register(10, 120, 30, extra: #","highFrameRate":true"#)
        let booster = try client.register(10, 120, 30, extra: #","highFrameRate":true"#)
        for _ in 0..<5 { try server.runNextVsync() }
        _ = try client.lines()
        _ = try watcher.lines()
        _ = try client.result(.boost, #"{"link":\#(booster),"duration":0.03,"range":{"minimum":80,"maximum":80,"preferred":80}}"#)
        _ = try client.result(.update, #"{"link":\#(holder),"paused":true}"#)
        let decreaseDue = try #require(server.nextWake)
        let wokeAt = decreaseDue.advanced(by: .milliseconds(52))
        server.step(to: wokeAt)
        let changes = try watcher.lines().compactMap { line -> [Double]? in
            guard let params = try JSONValue(parsing: line)["params"], params["kind"] == "refreshRateChanged",
                case .number(let from) = params["from"], case .number(let to) = params["to"], case .number(let at) = params["at"]
            else { return nil }
            return [from.doubleValue, to.doubleValue, at.doubleValue]
        }
        #expect(changes.map { Array($0.prefix(2)) } == [[120, 80], [80, 30]])
        // Each event carries the vsync its change took effect at, not the late wake-up's
        // time: the passed-over decrease its own vsync, the boost's end a later one
        // on the 80 Hz grid (12.5 ms), before the wake-up.
        try #require(changes.count == 2)
        #expect(abs(changes[0][2] - decreaseDue.seconds) < 1e-6)
        #expect(changes[1][2] > changes[0][2] + 0.012)
        #expect(changes[1][2] < wokeAt.seconds - 1e-6)
    }
}

import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// The vsync timer and the tick fan-out. The core reads the real `CLOCK_MONOTONIC`
/// for the model while its timers run on the embedded loop's virtual clock, so these
/// tests check the shape and invariants of ticks, not exact times (the model's tests
/// pin timing down with a manual clock).
@Suite struct TickTests {
    /// `"timestamp":123.456789012` etc.: seconds with exactly nine decimals.
    static func hasNineDecimals(_ line: String, field: String) -> Bool {
        guard let regex = try? Regex(#""\#(field)":[0-9]+\.[0-9]{9}[,}]"#) else { return false }
        return line.contains(regex)
    }

    static func ticks(_ lines: [String]) throws -> [TickNotification] {
        try lines.map { try TickNotification(json: notificationParams($0, .tick)) }
    }

    @Test func theVsyncTimerIsArmedOnTheLoop() throws {
        let server = ServerHarness(startTimers: true)
        let display = DisplayID(rawValue: 0)
        #expect(server.core.vsyncTimers[display] != nil)
        let next = try server.core.compositor.nextVsync(of: display)
        // Armed at the model's next vsync, a CLOCK_MONOTONIC deadline one 60 Hz period after start.
        let now = MonotonicClock.now
        #expect(next > now.advanced(by: .seconds(-5)) && next < now.advanced(by: .seconds(5)))
        var fired = 0
        server.core.vsyncObserver = { fired += 1 }
        server.loop.advanceTime(to: .uptimeNanoseconds(UInt64(next.nanoseconds) - 1))
        #expect(fired == 0)
        try server.runNextVsync()
        #expect(fired == 1)
        #expect(try server.core.compositor.nextVsync(of: display) > next)  // re-armed
    }

    @Test func aRegisteredLinkReceivesWellFormedTicks() throws {
        let server = ServerHarness(startTimers: true)
        let client = try server.connect()
        let link = try client.register(60, 60, 60, extra: #","label":"game""#)
        let bystander = try server.connect(Peers.user)

        try server.runNextVsync()
        let lines = try client.lines()
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix(#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":\#(link),"sequence":1,"timestamp":"#))
        #expect(line.hasSuffix(#","refreshRate":60.0,"callbackRate":60.0,"skipped":0}}"#))
        for field in ["timestamp", "targetTimestamp", "duration"] {
            #expect(Self.hasNineDecimals(line, field: field), "\(field) in \(line)")
        }
        #expect(line.contains(#""duration":0.016666667,"#))
        guard case .single(.notification(let method, let params)) = try JSONRPCClientInbound.parse(line: line) else {
            Issue.record("not a notification: \(line)")
            return
        }
        #expect(method == V1Method.tick.rawValue)
        #expect(params?.objectValue?.keys == ["link", "sequence", "timestamp", "targetTimestamp", "duration", "refreshRate", "callbackRate", "skipped"])
        let tick = try TickNotification(json: params)
        #expect(tick.link.rawValue == link)
        #expect(tick.sequence == 1 && tick.skipped == 0)
        #expect(tick.refreshRate == 60 && tick.callbackRate == 60)
        #expect(abs(tick.targetTimestamp - tick.timestamp - 1.0 / 60) < 2e-9)
        #expect(abs(tick.duration - 1.0 / 60) < 1e-9)
        // Comparable with this process's CLOCK_MONOTONIC.
        #expect(abs(tick.timestamp - MonotonicClock.now.seconds) < 10)
        #expect(try bystander.lines().isEmpty)

        // The next ticks continue the sequence; skipped accounts for any gap.
        var previous = tick
        for _ in 0..<5 {
            try server.runNextVsync()
            let next = try #require(try Self.ticks(client.lines()).first)
            #expect(next.sequence == previous.sequence + next.skipped + 1)
            #expect(next.timestamp >= previous.targetTimestamp - 1e-9)
            previous = next
        }
    }

    @Test func linksOfOneConnectionGetOneWritePerVsync() throws {
        let server = ServerHarness(startTimers: true)
        let client = try server.connect()
        let links = [try client.register(60, 60, 60), try client.register(30, 60, 60)]
        try server.runNextVsync()
        let first = try #require(try client.channel.readOutbound(as: ByteBuffer.self))
        #expect(try client.channel.readOutbound(as: ByteBuffer.self) == nil)
        let ticks = try Self.ticks(String(buffer: first).split(separator: "\n").map(String.init))
        #expect(ticks.map(\.link.rawValue) == links)
        #expect(Set(ticks.map(\.timestamp)).count == 1)
    }

    @Test func aLinkAtHalfTheRefreshRateTicksOnEveryOtherVsync() throws {
        let server = ServerHarness(startTimers: true)
        let client = try server.connect()
        let fast = try client.register(60, 60, 60)
        let slow = try client.register(30, 30, 30)
        var ticks: [TickNotification] = []
        for _ in 0..<8 {
            try server.runNextVsync()
            ticks += try Self.ticks(client.lines())
        }
        let slowTicks = ticks.filter { $0.link.rawValue == slow }
        #expect(ticks.filter { $0.link.rawValue == fast }.count > slowTicks.count)
        #expect(!slowTicks.isEmpty)
        for tick in slowTicks {
            #expect(tick.callbackRate == 30 && tick.refreshRate == 60)
            #expect(abs(tick.targetTimestamp - tick.timestamp - 2.0 / 60) < 2e-9)
        }
        for (previous, next) in zip(slowTicks, slowTicks.dropFirst()) {
            #expect(next.sequence == previous.sequence + next.skipped + 1)
        }
    }

    @Test func anIncreaseTakesEffectAtTheNextVsyncAndIsAnEvent() throws {
        let server = ServerHarness(startTimers: true)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        _ = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        _ = try watcher.lines()
        try server.runNextVsync()
        #expect(
            try watcher.lines()
                == [
                    #"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"watch":1,"kind":"refreshRateChanged","display":0,"from":60.0,"to":120.0,"reason":"120 Hz is the lowest rate that serves every link exactly; link 1 (80, 120, 120) holds it there"}}"#
                ]
        )
        let tick = try #require(try Self.ticks(client.lines()).first)
        #expect(tick.refreshRate == 120 && tick.callbackRate == 120)
        #expect(try server.core.compositor.refreshRate(of: nil) == 120)
    }

    @Test func pausedLinksGetNoTicks() throws {
        let server = ServerHarness(startTimers: true)
        let client = try server.connect()
        _ = try client.register(60, 60, 60, extra: #","paused":true"#)
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(try client.lines().isEmpty)
    }

    @Test func ticksForAnUnwritableConnectionAreDroppedAndCountedInSkipped() throws {
        let server = ServerHarness(startTimers: true)
        let client = try server.connect()
        let link = try client.register(60, 60, 60)
        try server.runNextVsync()
        let before = try #require(try Self.ticks(client.lines()).first)

        client.channel.isWritable = false
        client.channel.pipeline.fireChannelWritabilityChanged()
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(try client.lines().isEmpty)

        client.channel.isWritable = true
        client.channel.pipeline.fireChannelWritabilityChanged()
        try server.runNextVsync()
        let after = try #require(try Self.ticks(client.lines()).first)
        #expect(after.link.rawValue == link)
        #expect(after.skipped >= 3)
        #expect(after.sequence == before.sequence + after.skipped + 1)
        #expect(client.channel.isActive)
        #expect(server.core.sessions.values.first?.unwritableDeadline == nil)
    }

    @Test func aConnectionUnwritableForTooLongIsDisconnected() throws {
        let server = ServerHarness(limits: .init(unwritableTimeout: .milliseconds(500)), startTimers: true)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        let link = try client.register(60, 60, 60)
        try server.runNextVsync()
        _ = try client.lines()
        _ = try watcher.lines()

        client.channel.isWritable = false
        client.channel.pipeline.fireChannelWritabilityChanged()
        server.loop.advanceTime(by: .milliseconds(499))
        #expect(client.channel.isActive)
        server.loop.advanceTime(by: .milliseconds(2))
        #expect(!client.channel.isActive)
        #expect(server.core.compositor.linkCount == 0)
        let events = try watcher.lines().map { try notificationParams($0, .event) }
        #expect(events.contains(["watch": 1, "kind": "linkRemoved", "display": 0, "link": JSONValue(link), "reason": "connection closed"]))
    }
}

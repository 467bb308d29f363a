#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRatePosix
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

    /// One fixed 60 Hz display: the rate never changes, so only links make anything due.
    static let fixed60 = [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .fixed60)]

    @Test("a late wake-up or an overrun is in each link's next tick and in the journal, each named; sleeping through a 10 Hz link's idle vsyncs is not late")
    func lateWakeUpsAreReported() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(displays: Self.fixed60, logHandler: log)
        let period = Duration.seconds(1.0 / 60)
        let client = try server.connect()
        _ = try client.register(10, 10, 0)
        // The tick plane sleeps through the five vsyncs between two of the link's: on time.
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(try Self.ticks(client.lines()).map(\.skipped) == [0, 0, 0])
        #expect(!log.messages.contains { $0.contains("tick plane woke") }, "\(log.messages)")

        let fast = try server.connect(Peers.user)
        _ = try fast.register(60, 60, 0)
        try server.runNextVsync()
        _ = try fast.lines()
        // Less than a period late: the same vsync, nothing passed over, nothing said.
        let due = try #require(server.nextWake)
        server.step(to: due.advanced(by: period / 2))
        #expect(try Self.ticks(fast.lines()).map(\.skipped) == [0])
        #expect(!log.messages.contains { $0.contains("tick plane woke") }, "\(log.messages)")

        // Two and a half periods late: two vsyncs pass unprocessed.
        let next = try #require(server.nextWake)
        server.step(to: next.advanced(by: period * 2 + period / 2))
        #expect(try Self.ticks(fast.lines()).map(\.skipped) == [2])
        let lines = log.messages.filter { $0.contains("tick plane woke") }
        #expect(
            lines == ["the tick plane woke 41.7 ms after it was due: the vsyncs it passed over show in the next ticks' skipped (late 1 time(s) since start)"]
        )
        try server.runNextVsync()
        #expect(try Self.ticks(fast.lines()).map(\.skipped) == [0])
        #expect(log.messages.filter { $0.contains("tick plane woke") }.count == 1)

        // A period and a half late, the previous iteration done 0.3 ms before the deadline:
        // the wake-up itself came late. Then a period and a half late again, the previous
        // iteration still sending 1.4 periods past the deadline: the fan-out overran, it did
        // not wake late, and the journal says which.
        let third = try #require(server.nextWake)
        server.step(to: third.advanced(by: period + period / 2), previousStepFinished: third.advanced(by: .microseconds(-300)))
        #expect(try Self.ticks(fast.lines()).map(\.skipped) == [1])
        let fourth = try #require(server.nextWake)
        server.step(to: fourth.advanced(by: period + period / 2), previousStepFinished: fourth.advanced(by: period + period * 2 / 5))
        #expect(try Self.ticks(fast.lines()).map(\.skipped) == [1])
        let busyLines = log.messages.filter { $0.contains("tick plane reached") }
        #expect(
            busyLines == [
                "the tick plane reached a vsync 25.0 ms late: it was still sending the previous vsync's ticks 23.3 ms after it: the vsyncs it passed over show in the next ticks' skipped (late 3 time(s) since start)"
            ]
        )
        #expect(log.messages.filter { $0.contains("tick plane woke") }.count == 2)
        let causes = log.entries.filter { $0.metadata["event"] == "tick-plane-late" }.map { [$0.metadata["cause"], $0.metadata["busy_ms"]] }
        #expect(causes == [["woke-late", nil], ["woke-late", nil], ["busy", "23.3"]])
    }

    @Test func theTickPlaneWakesExactlyAtTheVsyncsWhereALinkTicks() throws {
        let server = ServerHarness(displays: Self.fixed60)
        let start = server.clock.now
        let period = Duration.seconds(1.0 / 60)
        // No link, no rate change pending: the tick plane does not wake at all (it would
        // otherwise wake 60 times a second for nobody).
        #expect(server.nextWake == nil)

        let client = try server.connect()
        _ = try client.register(10, 10, 0)
        // A 10 Hz link on a 60 Hz grid ticks on vsyncs whose index is a multiple of 6.
        #expect(server.nextWake == start.advanced(by: period * 6))
        var wakes: [MonotonicClock.Instant] = []
        for _ in 0..<5 { wakes.append(try server.runNextVsync()) }
        #expect(wakes == (1...5).map { start.advanced(by: period * (6 * $0)) })
        let ticks = try Self.ticks(client.lines())
        #expect(ticks.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(ticks.allSatisfy { $0.skipped == 0 && $0.callbackRate == 10 && $0.refreshRate == 60 })

        // A 20 Hz link on another connection: wakes at the union of both grids.
        let other = try server.connect(Peers.user)
        _ = try other.register(20, 20, 0)
        #expect(server.nextWake == start.advanced(by: period * 33))
        try server.runNextVsync()
        #expect(try client.lines().isEmpty)
        #expect(try Self.ticks(other.lines()).count == 1)
        #expect(try server.runNextVsync() == start.advanced(by: period * 36))
        #expect(try Self.ticks(client.lines()).map(\.sequence) == [6])

        // Both gone: nothing due again.
        client.close()
        other.close()
        #expect(server.nextWake == nil)
    }

    @Test func aLinkJoiningAfterALongSleepTicksAtTheFirstVsyncAfterItsRegistration() throws {
        let server = ServerHarness(displays: Self.fixed60)
        let start = server.clock.now
        let period = Duration.seconds(1.0 / 60)
        // Nothing woke the tick plane for 10 s and 1/4 period: the grid is computed, not counted.
        server.clock.set(start.advanced(by: period * 600 + period / 4))
        let client = try server.connect()
        _ = try client.register(60, 60, 60)
        #expect(server.nextWake == start.advanced(by: period * 601))
        try server.runNextVsync()
        let tick = try #require(try Self.ticks(client.lines()).first)
        #expect(tick.sequence == 1 && tick.skipped == 0)
        #expect(abs(tick.timestamp - start.advanced(by: period * 601).seconds) < 1e-9)
    }

    @Test func aRegisterReplyPrecedesTheLinksFirstTickEvenWhenTheTickIsComputedFirst() throws {
        let server = ServerHarness(displays: Self.fixed60)
        let client = try server.connect(socketBuffer: 1 << 16)
        let session = try #require(server.core.sessions.values.first)
        // The tick plane runs while the control loop is between taking the request and
        // writing its reply (as it can on its own thread): its tick waits for the reply.
        session.writer.beginReply()
        var tickLine = ByteBuffer(string: "{\"tick\":1}\n")
        session.writer.writeTicks(tickLine)
        tickLine = ByteBuffer(string: "{\"tick\":2}\n")
        session.writer.writeTicks(tickLine)
        session.writer.endReply(ByteBuffer(string: "{\"reply\":1}\n"))
        #expect(try client.lines() == [#"{"reply":1}"#, #"{"tick":1}"#, #"{"tick":2}"#])
    }

    @Test func theWatchdogPingsOnItsOwnScheduleWithoutLinks() throws {
        let server = ServerHarness(displays: Self.fixed60, watchdogInterval: .seconds(2))
        let start = server.clock.now
        #expect(server.nextWake == start.advanced(by: .seconds(2)))
        try server.runNextVsync()
        #expect(server.watchdogPings.value == 1)
        #expect(server.nextWake == start.advanced(by: .seconds(4)))
        server.step(to: start.advanced(by: .seconds(3)))
        #expect(server.watchdogPings.value == 1, "not due yet")
        try server.runNextVsync()
        #expect(server.watchdogPings.value == 2)
    }

    @Test func aRegisteredLinkReceivesWellFormedTicks() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(60, 60, 60, extra: #","label":"game""#)
        let bystander = try server.connect(Peers.user)

        try server.runNextVsync()
        let lines = try client.lines()
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix(#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":\#(link),"sequence":1,"timestamp":"#))
        #expect(line.contains(#","refreshRate":60.0,"callbackRate":60.0,"targetPresentationTimestamp":"#))
        #expect(line.hasSuffix(#","skipped":0}}"#))
        for field in ["timestamp", "targetTimestamp", "duration", "targetPresentationTimestamp"] {
            #expect(Self.hasNineDecimals(line, field: field), "\(field) in \(line)")
        }
        #expect(line.contains(#""duration":0.016666667,"#))
        guard case .single(.notification(let method, let params)) = try JSONRPCClientInbound.parse(line: line) else {
            Issue.record("not a notification: \(line)")
            return
        }
        #expect(method == V1Method.tick.rawValue)
        #expect(
            params?.objectValue?.keys
                == ["link", "sequence", "timestamp", "targetTimestamp", "duration", "refreshRate", "callbackRate", "targetPresentationTimestamp", "skipped"]
        )
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
        let server = ServerHarness()
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
        let server = ServerHarness()
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
        let server = ServerHarness()
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        _ = try client.register(80, 120, 120, extra: #","highFrameRate":true"#)
        _ = try watcher.lines()
        let vsync = try server.runNextVsync()
        let events = try watcher.lines()
        let reason = "120 Hz is the lowest rate that serves every link exactly; link 1 (80, 120, 120) holds it there"
        #expect(
            events
                == [
                    #"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"watch":1,"kind":"refreshRateChanged","display":0,"from":60.0,"to":120.0,"reason":"\#(reason)","#
                        + #""decision":{"rate":120.0,"rule":"exact","deciders":[1],"deciderCount":1,"cap":null,"limited":[],"limitedCount":0,"pending":null,"reason":"\#(reason)"},"#
                        + #""at":\#(WireTime.format(nanoseconds: vsync.nanoseconds))}}"#
                ]
        )
        let tick = try #require(try Self.ticks(client.lines()).first)
        #expect(tick.refreshRate == 120 && tick.callbackRate == 120)
        #expect(try server.compositor.refreshRate(of: nil) == 120)
    }

    @Test func pausedLinksGetNoTicksNorWakeUps() throws {
        let server = ServerHarness(displays: Self.fixed60)
        let client = try server.connect()
        _ = try client.register(60, 60, 60, extra: #","paused":true"#)
        #expect(server.nextWake == nil)
        server.step(to: server.clock.now.advanced(by: .seconds(1)))
        #expect(try client.lines().isEmpty)
    }

    @Test func ticksForAnUnwritableConnectionAreDroppedAndCountedInSkipped() throws {
        let server = ServerHarness(limits: .init(outboundHighWater: 512))
        let client = try server.connect(socketBuffer: 1024)
        let link = try client.register(60, 60, 60)
        try server.runNextVsync()
        let before = try #require(try Self.ticks(client.lines()).first)

        // The client stops reading: the socket fills, then the writer's queue passes its
        // high-water mark, and from then on no tick is even encoded for it.
        var vsyncs = 0
        while server.shared.read({ $0.driver.unwritableCount }) == 0 && vsyncs < 1000 {
            try server.runNextVsync()
            vsyncs += 1
        }
        #expect(server.shared.read { $0.driver.unwritableCount } == 1)
        let queued = try #require(server.core.sessions.values.first).writer.queuedBytes
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(try #require(server.core.sessions.values.first).writer.queuedBytes == queued, "no tick added while unwritable")

        // It reads again: the queue drains (whole lines, in order), ticks resume, and the
        // first one counts every interval it missed.
        var received = try Self.ticks(client.lines())
        server.flushWritable()
        received += try Self.ticks(client.lines())
        #expect(server.shared.read { $0.driver.unwritableCount } == 0)
        try server.runNextVsync()
        received += try Self.ticks(client.lines())
        let sequences = [before] + received
        for (earlier, later) in zip(sequences, sequences.dropFirst()) {
            #expect(later.sequence == earlier.sequence + later.skipped + 1)
        }
        let after = try #require(received.last)
        #expect(after.link.rawValue == link)
        #expect(after.skipped >= 3)
        #expect(client.channel.isActive)
    }

    @Test("the leader's turn: its work ends after its sends, or after its flushes of slow readers; a deadline the flushes ran past is an overrun, not a late wake-up")
    func flushingSlowReadersCountsAsTheFanOutsWork() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(limits: .init(outboundHighWater: 512), displays: Self.fixed60, logHandler: log)
        let period = Duration.seconds(1.0 / 60)
        let client = try server.connect(socketBuffer: 1024)
        _ = try client.register(60, 60, 60)
        try server.runNextVsync()
        _ = try client.lines()
        // `now` reads these instants in turn (and moves the harness's clock with them).
        var script: [MonotonicClock.Instant] = []
        let now = { () -> MonotonicClock.Instant in
            // A read the script did not plan for fails the test (not the process).
            guard !script.isEmpty else {
                Issue.record("the turn read the clock once more than scripted")
                return server.clock.now
            }
            let instant = script.removeFirst()
            server.clock.set(instant)
            return instant
        }
        let poll = { (_: MonotonicClock.Instant?) in server.shared.waiter.wait(until: 1) }

        // A turn with nothing to flush: its work ended when its sends did.
        let due = try #require(server.nextWake)
        script = [due, due.advanced(by: .microseconds(500))]
        var finished: MonotonicClock.Instant?
        server.engine.turn(now: now, finished: &finished, wait: poll)
        #expect(script.isEmpty)
        #expect(finished == due.advanced(by: .microseconds(500)))
        _ = try client.lines()

        // The client stops reading until its queue passes the high-water mark, then reads
        // everything: the next wait finds its socket writable, and the turn flushes it.
        var vsyncs = 0
        while server.shared.read({ $0.driver.unwritableCount }) == 0 && vsyncs < 1000 {
            try server.runNextVsync()
            vsyncs += 1
        }
        _ = try client.lines()
        let slow = try #require(server.nextWake)
        // The flushes end 1.4 periods after the next deadline (one period on).
        let flushed = slow.advanced(by: period).advanced(by: period * 7 / 5)
        script = [slow, slow.advanced(by: .microseconds(300)), flushed]
        server.engine.turn(now: now, finished: &finished, wait: poll)
        #expect(script.isEmpty, "the turn found nothing to flush")
        #expect(finished == flushed)

        // The next turn comes a period and a half late: the fan-out was still flushing.
        let next = try #require(server.nextWake)
        #expect(next == slow.advanced(by: period))
        script = [next.advanced(by: period + period / 2), next.advanced(by: period * 2)]
        server.engine.turn(now: now, finished: &finished, wait: poll)
        server.loop.run()
        let causes = log.entries.filter { $0.metadata["event"] == "tick-plane-late" }.map { [$0.metadata["cause"], $0.metadata["busy_ms"]] }
        #expect(causes == [["busy", "23.3"]])
    }

    @Test func aConnectionUnwritableForTooLongIsDisconnected() throws {
        let server = ServerHarness(limits: .init(unwritableTimeout: .milliseconds(500), outboundHighWater: 512))
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect(socketBuffer: 1024)
        let link = try client.register(60, 60, 60)
        var vsyncs = 0
        while server.shared.read({ $0.driver.unwritableCount }) == 0 && vsyncs < 1000 {
            try server.runNextVsync()
            vsyncs += 1
        }
        let since = server.clock.now
        _ = try watcher.lines()
        // Still connected just before the deadline; gone at it.
        server.step(to: since.advanced(by: .milliseconds(499)))
        #expect(client.channel.isActive)
        server.step(to: since.advanced(by: .milliseconds(500)))
        #expect(!client.channel.isActive)
        #expect(server.compositor.linkCount == 0)
        let events = try watcher.lines().map { try notificationParams($0, .event) }
        #expect(events.contains(["watch": 1, "kind": "linkRemoved", "display": 0, "link": JSONValue(link), "reason": "connection closed"]))
    }

    /// A client that shuts down only its reading side never hangs up its end: the daemon's
    /// end stays readable and NIO sees no close, and a failed writer queues nothing, so the
    /// unwritable timeout never starts. The failed send itself must close the connection,
    /// or the link votes and ticks for as long as the client keeps the socket.
    @Test func aClientThatStopsReceivingIsDisconnectedAtTheFirstFailedSend() throws {
        let server = ServerHarness()
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect(socketBuffer: 1 << 16)
        let link = try client.register(120, 120, 120, extra: #","highFrameRate":true"#)
        try server.runNextVsync()
        _ = try client.lines()
        _ = try watcher.lines()
        let clientEnd = try #require(client.peerDescriptor)
        try #require(shutdown(clientEnd, Int32(SHUT_RD)) == 0)
        try server.runNextVsync()
        #expect(!client.channel.isActive)
        #expect(server.compositor.linkCount == 0)
        let events = try watcher.lines().map { try notificationParams($0, .event) }
        #expect(events.contains(["watch": 1, "kind": "linkRemoved", "display": 0, "link": JSONValue(link), "reason": "connection closed"]))
    }
}

import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateModel
@testable import FrameRateServer

/// `Present` and `Presented` through the daemon on a stepped clock: the tick plane sends
/// `Presented` at the vsync that shows the frame; GetState counts hitches and residency.
@Suite struct PresentTests {
    static let tickPrefix = #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","#
    static let presentedPrefix = #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Presented","#

    /// A connection with one 120 Hz link that has started ticking at 120 Hz; returns its latest tick.
    static func link120(_ server: ServerHarness) throws -> (TestClient, UInt64, TickNotification) {
        let client = try server.connect()
        let link = try client.register(120, 120, 120, extra: #","highFrameRate":true,"label":"scroller""#)
        for _ in 0..<10 {
            try server.runNextVsync()
            let ticks = try client.lines().filter { $0.hasPrefix(tickPrefix) }.map { try TickNotification(json: notificationParams($0, .tick)) }
            if let tick = ticks.last, tick.refreshRate == 120 { return (client, link, tick) }
        }
        throw TestFailure("the link never ticked at 120 Hz")
    }

    /// ``link120(_:)`` whose client then answers that tick with `FrameDone`: from then on
    /// the daemon waits for each tick's frame before the link's next interval.
    static func answering120(_ server: ServerHarness) throws -> (TestClient, UInt64) {
        let (client, link, tick) = try link120(server)
        try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        return (client, link)
    }

    static func presented(_ lines: [String]) throws -> [PresentedNotification] {
        try lines.filter { $0.hasPrefix(presentedPrefix) }.map { try PresentedNotification(json: notificationParams($0, .presented)) }
    }

    static func ticks(_ lines: [String]) throws -> [TickNotification] {
        try lines.filter { $0.hasPrefix(tickPrefix) }.map { try TickNotification(json: notificationParams($0, .tick)) }
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 2e-9 }

    /// The links a watcher has been sent as `linkUpdated` since it was last read.
    static func linkUpdates(_ watcher: TestClient) throws -> [LinkState] {
        try watcher.lines().compactMap { line -> LinkState? in
            guard case .linkUpdated(_, let state) = try CompositorEvent(params: notificationParams(line, .event)) else { return nil }
            return state
        }
    }

    @Test func aTwentyMillisecondStallShowsOneLateFrameWithItsHitch() throws {
        let server = ServerHarness()
        let (client, link, first) = try Self.link120(server)
        let period = 1.0 / 120
        // On time: presented at once, shown at the tick's target, at the next vsync.
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(first.sequence)}"#))
        try server.runNextVsync()
        var lines = try client.lines()
        let onTime = try #require(try Self.presented(lines).first)
        #expect(onTime.sequence == first.sequence && !onTime.dropped && onTime.hitch == 0)
        #expect(Self.close(onTime.presentedTime, first.targetTimestamp) && Self.close(onTime.expectedTime, first.targetTimestamp))
        let stalled = try #require(try Self.ticks(lines).last)
        // The client stalls 20 ms: the two vsyncs meanwhile deliver nothing (the frame is not done).
        try server.runNextVsync()
        try server.runNextVsync()
        #expect(try Self.ticks(client.lines()).isEmpty)
        server.clock.set(MonotonicClock.Instant(seconds: stalled.timestamp).advanced(by: .milliseconds(20)))
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(stalled.sequence)}"#))
        #expect(try client.lines().isEmpty)
        try server.runNextVsync()
        lines = try client.lines()
        let late = try #require(try Self.presented(lines).first)
        #expect(late.sequence == stalled.sequence && !late.dropped)
        #expect(Self.close(late.presentedTime, stalled.timestamp + 3 * period))
        #expect(Self.close(late.expectedTime, stalled.targetTimestamp))
        #expect(Self.close(late.hitch, 2 * period))
        // The same vsync brings the next tick, which reports the two skipped intervals.
        #expect(try Self.ticks(lines).first?.skipped == 2)

        let state = try CompositorState(json: client.result(.getState))
        let hitches = try #require(state.displays[0].links[0].hitches)
        #expect(hitches.frames == 2 && hitches.late == 1 && hitches.dropped == 0)
        #expect(abs(Double(WireTime.nanoseconds(of: hitches.hitchTime)) / 1e6 - 2000 * period) < 0.001)
        #expect(hitches.ratioMillisecondsPerSecond > 0)
    }

    @Test func aReplacedFrameIsDroppedAtOnce() throws {
        let server = ServerHarness()
        let (client, link, tick) = try Self.link120(server)
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        #expect(try client.lines().isEmpty)
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        let dropped = try #require(try Self.presented(client.lines()).first)
        #expect(dropped.dropped && dropped.presentedTime == 0 && dropped.hitch == 0 && dropped.sequence == tick.sequence)
        #expect(Self.close(dropped.expectedTime, tick.targetTimestamp))
        try server.runNextVsync()
        #expect(try Self.presented(client.lines()).map(\.dropped) == [false])
        let state = try CompositorState(json: client.result(.getState))
        #expect(state.displays[0].links[0].hitches?.dropped == 1)
    }

    @Test("Presented never overtakes its vsync's tick, not even while a reply holds the ticks back")
    func presentedWaitsBehindAReplyWithTheTicks() throws {
        let server = ServerHarness()
        let (client, link, tick) = try Self.link120(server)
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        // A reply in progress on the connection when the vsync comes (the control loop is
        // between beginReply and endReply): the vsync's tick waits for the reply.
        let writer = try #require(server.shared.read { $0.writers.values.first })
        writer.beginReply()
        try server.runNextVsync()
        #expect(try client.lines().isEmpty, "nothing overtakes the reply")
        writer.endReply(ByteBuffer(string: "{\"reply\":1}\n"))
        let lines = try client.lines()
        #expect(lines.count == 3)
        #expect(lines.first == #"{"reply":1}"#)
        #expect(lines.dropFirst().first?.hasPrefix(Self.tickPrefix) == true)
        #expect(lines.last?.hasPrefix(Self.presentedPrefix) == true)
        #expect(try Self.presented(lines).map(\.sequence) == [tick.sequence])
    }

    @Test func aRefusedPresentDoesNotCountAsItsFrame() throws {
        let server = ServerHarness()
        let (client, link, tick) = try Self.link120(server)
        // Presented once: from now on the daemon paces the link by its frame reports.
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        try server.runNextVsync()
        let next = try #require(try Self.ticks(client.lines()).last)
        // Aimed at vsync id 0, which no frame timeline of the tick offers: refused...
        let refused = try client.error(.present, #"{"link":\#(link),"sequence":\#(next.sequence),"vsyncId":0}"#)
        #expect(refused.grpcStatus == .outOfRange && refused.message.contains("vsync"))
        // ...and not a frame: the link is still busy with that tick, so the next vsync skips it.
        try server.runNextVsync()
        #expect(try Self.ticks(client.lines()).isEmpty)
        // Presented properly, it counts: the next vsync ticks again, one interval skipped.
        try client.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(next.sequence)}"#))
        try server.runNextVsync()
        #expect(try Self.ticks(client.lines()).first?.skipped == 1)
    }

    @Test func presentRefusesWhatItCannotShow() throws {
        let server = ServerHarness()
        let (client, link, tick) = try Self.link120(server)
        let unsent = try client.error(.present, #"{"link":\#(link),"sequence":\#(tick.sequence + 5)}"#)
        #expect(unsent.grpcStatus == .outOfRange)
        let farAhead = try client.error(.present, #"{"link":\#(link),"sequence":\#(tick.sequence),"at":\#(tick.timestamp + 60)}"#)
        #expect(farAhead.code == -32602 && farAhead.message.contains("ahead"))
        let badInterval = try client.error(.present, #"{"link":\#(link),"sequence":\#(tick.sequence),"afterMinimumDuration":-1}"#)
        #expect(badInterval.code == -32602)
        let other = try server.connect(Peers.user)
        #expect(try other.error(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#).grpcStatus == .notFound)
        // As a request it is answered with {}.
        #expect(try client.result(.present, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#) == .object([:]))
    }

    @Test("GetState names the tick whose frame a link is held back for, once an interval passed without a tick")
    func getStateShowsTheAwaitedFrame() throws {
        let server = ServerHarness()
        let (client, _) = try Self.answering120(server)
        try server.runNextVsync()
        let unanswered = try #require(try Self.ticks(client.lines()).last)
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(try Self.ticks(client.lines()).isEmpty, "held back while tick \(unanswered.sequence) is unanswered")
        let state = try CompositorState(json: client.result(.getState))
        let awaiting = try #require(state.displays[0].links.first?.awaitingFrame)
        #expect(awaiting.sequence == unanswered.sequence && awaiting.skipped == 3)
        #expect(Self.close(awaiting.since, unanswered.timestamp))
    }

    @Test("the journal says once per wait why a link held back for 1 s gets no ticks, with who holds it")
    func aLinkHeldBackForASecondIsLogged() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        let (client, link) = try Self.answering120(server)
        try server.runNextVsync()
        let unanswered = try #require(try Self.ticks(client.lines()).last)
        for _ in 0..<240 { try server.runNextVsync() }
        let lines = log.entries.filter { $0.metadata["event"] == "link-held-back" }
        #expect(lines.count == 1, "\(log.messages)")
        let line = try #require(lines.first)
        #expect(line.message.hasPrefix("link \(link) 'scroller' on display 0 gets no ticks: its client has not answered tick \(unanswered.sequence) for 10"), "\(line.message)")
        #expect(line.message.contains("a link that sends FrameDone or Present must answer every tick it gets"))
        #expect(line.metadata["sequence"] == "\(unanswered.sequence)" && line.metadata["pid"] == "\(Peers.root.pid)")
    }

    @Test("links held back at the same vsync are all announced, and all resumed at the same vsync (one report per vsync)")
    func linksHeldBackTogetherAreAllAnnounced() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let clients = try (0..<3).map { _ in try Self.answering120(server) }
        // Each answers whatever it got while the others registered, so all three wait on
        // the next vsync's tick.
        try server.runNextVsync()
        for (client, link) in clients {
            for tick in try Self.ticks(client.lines()) {
                try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
            }
        }
        try server.runNextVsync()
        let unanswered = try clients.map { client, _ in try #require(try Self.ticks(client.lines()).last) }
        #expect(Set(unanswered.map(\.timestamp)).count == 1, "the three wait on ticks of one vsync")
        _ = try watcher.lines()
        func updates() throws -> [LinkState] { try Self.linkUpdates(watcher) }
        for _ in 0..<240 { try server.runNextVsync() }
        let held = try updates()
        #expect(Set(held.map(\.link.rawValue)) == Set(clients.map(\.1)) && held.count == 3, "\(held)")
        #expect(held.allSatisfy { $0.awaitingFrame != nil })
        #expect(log.entries.filter { $0.metadata["event"] == "link-held-back" }.count == 3)

        for ((client, link), tick) in zip(clients, unanswered) {
            try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        }
        try server.runNextVsync()
        for (client, _) in clients { #expect(try Self.ticks(client.lines()).count == 1) }
        let resumed = try updates()
        #expect(Set(resumed.map(\.link.rawValue)) == Set(clients.map(\.1)) && resumed.count == 3, "\(resumed)")
        #expect(resumed.allSatisfy { $0.awaitingFrame == nil })
        #expect(log.entries.filter { $0.metadata["event"] == "link-resumed" }.count == 3)
        #expect(server.core.announcedHeldBack.isEmpty)
    }

    @Test("a burst of held-back links is announced a bounded number of watch lines a turn, the rest 1 ms later, in order")
    func aBurstOfHeldBackLinksIsAnnouncedInBoundedTurns() throws {
        let server = ServerHarness()
        // 64 watches on four connections: a turn announces 2,048 / 64 = 32 links.
        let watchers = try (0..<4).map { _ in try server.connect(Peers.root) }
        for watcher in watchers { for _ in 0..<16 { _ = try watcher.result(.watch) } }
        #expect(server.core.watchers.count == 64)
        let app = try server.connect(Peers.root)
        let links = try (0..<40).map { _ in try app.register(120, 120, 120, extra: #","highFrameRate":true"#) }
        // Every link answers its first tick, then leaves the next one (the same vsync's for all) unanswered.
        try server.runNextVsync()
        for tick in try Self.ticks(app.lines()) {
            try app.send(notificationLine(.frameDone, #"{"link":\#(tick.link.rawValue),"sequence":\#(tick.sequence)}"#))
        }
        try server.runNextVsync()
        #expect(Set(try Self.ticks(app.lines()).map(\.link.rawValue)) == Set(links))
        for watcher in watchers { _ = try watcher.lines() }
        var first: [LinkState] = []
        for _ in 0..<240 where first.isEmpty {
            try server.runNextVsync()
            first = try Self.linkUpdates(watchers[0])
        }
        // Each announcement is a line to each of the connection's 16 watches.
        #expect(first.count == 32 * 16 && Set(first.map(\.link.rawValue)).count == 32, "\(first.count) lines")
        #expect(server.core.pendingAnnouncements.count == 8)
        server.loop.advanceTime(by: .milliseconds(1))
        let rest = try Self.linkUpdates(watchers[0])
        #expect(rest.count == 8 * 16)
        #expect(Set((first + rest).map(\.link.rawValue)) == Set(links) && (first + rest).allSatisfy { $0.awaitingFrame != nil })
        #expect(server.core.pendingAnnouncements.isEmpty)
    }

    @Test("a watcher hears when a link is held back for 1 s and when it ticks again (linkUpdated, with and without awaitingFrame); the journal says both")
    func watchersHearAHeldBackLinkAndItsResumption() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let (client, link) = try Self.answering120(server)
        try server.runNextVsync()
        let unanswered = try #require(try Self.ticks(client.lines()).last)
        _ = try watcher.lines()
        func updates() throws -> [LinkState] { try Self.linkUpdates(watcher) }

        // Nothing while the wait is under 1 s (119 vsyncs at 120 Hz); then one update.
        for _ in 0..<119 { try server.runNextVsync() }
        #expect(try updates().isEmpty)
        for _ in 0..<121 { try server.runNextVsync() }
        let held = try updates()
        #expect(held.count == 1, "\(held)")
        let awaiting = try #require(held.first?.awaitingFrame)
        #expect(held.first?.link.rawValue == link && awaiting.sequence == unanswered.sequence && awaiting.skipped >= 120)
        #expect(held.first?.peer == nil && held.first?.label == nil, "another user's watcher sees neither who holds the link nor its label")

        // The client answers: the link's next interval ticks, and the watcher hears it without awaitingFrame.
        try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(unanswered.sequence)}"#))
        try server.runNextVsync()
        let next = try #require(try Self.ticks(client.lines()).last)
        #expect(next.skipped >= 240)
        let resumed = try updates()
        #expect(resumed.count == 1 && resumed.first?.link.rawValue == link && resumed.first?.awaitingFrame == nil, "\(resumed)")
        #expect(server.core.announcedHeldBack.isEmpty, "the announcement ends with its wait")
        // Once per wait: the ticks that follow say nothing more.
        try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(next.sequence)}"#))
        try server.runNextVsync()
        #expect(try updates().isEmpty)

        let lines = log.entries.filter { ["link-held-back", "link-resumed"].contains($0.metadata["event"]) }
        #expect(lines.map { $0.metadata["event"] } == ["link-held-back", "link-resumed"])
        let line = try #require(lines.last)
        // The stepped clock makes the wait exact: from the unanswered tick to the next one.
        let tenths = Int(((next.timestamp - unanswered.timestamp) * 10_000).rounded())
        let waited = "\(tenths / 10).\(tenths % 10)"
        #expect(line.metadata["sequence"] == "\(next.sequence)" && line.metadata["waited_ms"] == waited, "\(line.metadata)")
        #expect(
            line.message
                == "link \(link) 'scroller' on display 0 ticks again: its client answered, and tick \(next.sequence) came \(waited) ms after the tick it waited on",
            "\(line.message)"
        )
    }

    @Test("an announced wait is forgotten when its link is invalidated or its connection closes")
    func announcedWaitsEndWithTheirLinks() throws {
        let server = ServerHarness()
        for closing in [false, true] {
            let (client, link) = try Self.answering120(server)
            for _ in 0..<130 { try server.runNextVsync() }
            #expect(server.core.announcedHeldBack[LinkID(rawValue: link)] != nil, "announced after 1 s")
            if closing {
                client.channel.close(promise: nil)
                server.loop.run()
            } else {
                _ = try client.result(.invalidate, #"{"link":\#(link)}"#)
            }
            #expect(server.core.announcedHeldBack.isEmpty, closing ? "connection closed" : "invalidated")
        }
    }

    @Test("a wait ended by a pause leaves its announcement, which never announces the end of a later wait")
    func aStaleAnnouncementAnnouncesNothing() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let (client, link) = try Self.answering120(server)
        for _ in 0..<130 { try server.runNextVsync() }
        let announced = try #require(server.core.announcedHeldBack[LinkID(rawValue: link)])
        // Paused, then resumed: the pacer forgets the wait without a resumption.
        _ = try client.result(.update, #"{"link":\#(link),"paused":true}"#)
        _ = try client.result(.update, #"{"link":\#(link),"paused":false}"#)
        #expect(server.core.announcedHeldBack[LinkID(rawValue: link)]?.awaited == announced.awaited)
        _ = try watcher.lines()
        let lines = log.entries.count
        // The end of a later wait (another tick) reaching the control loop before its start
        // (the hops of a real daemon can be that close): nothing is announced, and the
        // stale entry is gone.
        let later = ResumedLink(
            link: LinkID(rawValue: link), owner: try #require(server.compositor.snapshot(of: LinkID(rawValue: link))?.owner),
            awaited: announced.awaited + 50, sequence: announced.awaited + 60, waited: .seconds(1)
        )
        server.core.linkResumed(display: DisplayID(rawValue: 0), later)
        server.loop.run()
        #expect(try watcher.lines().isEmpty)
        #expect(log.entries.count == lines && !log.entries.contains { $0.metadata["event"] == "link-resumed" })
        #expect(server.core.announcedHeldBack[LinkID(rawValue: link)] == nil)
    }

    @Test func getStateShowsResidencyThatAddsUpAndNamesEndedLinks() throws {
        let server = ServerHarness()
        let (client, link, _) = try Self.link120(server)
        for _ in 0..<60 { try server.runNextVsync() }
        client.close()
        for _ in 0..<40 { server.step(to: server.clock.now.advanced(by: .milliseconds(50))) }
        let viewer = try server.connect(Peers.admin)
        let state = try CompositorState(json: viewer.result(.getState))
        let display = state.displays[0]
        let uptime = try #require(display.uptime)
        let total = display.residency.reduce(0) { $0 + $1.seconds }
        #expect(abs(total - uptime) <= 1.0 / 120)
        for entry in display.residency {
            #expect(abs(entry.heldBy.reduce(0) { $0 + $1.seconds } - entry.seconds) < 1e-6)
        }
        let at120 = try #require(display.residency.first { $0.rate == 120 })
        let holder = try #require(at120.heldBy.first { $0.link == LinkID(rawValue: link) })
        // The connection is gone; its link keeps its share under the identity it had.
        #expect(holder.peer == Peers.root.identity && holder.label == "scroller")
        #expect(display.residency.contains { $0.heldBy.contains { $0.reason == "idle" } })
        // Another user sees the share, not who earned it (docs/protocol.md, Permissions).
        let stranger = try CompositorState(json: server.connect(Peers.user).result(.getState))
        let hidden = try #require(stranger.displays[0].residency.first { $0.rate == 120 }?.heldBy.first { $0.link == LinkID(rawValue: link) })
        #expect(hidden.peer == nil && hidden.label == nil && hidden.seconds == holder.seconds)
    }
}

import FrameRateTesting
import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// The cap on one kind of log line from one source, on a stepped clock.
@Suite struct RejectionLogLimiterTests {
    typealias Limiter = RejectionLogLimiter<ManualClock.Instant>
    let start = ManualClock.Instant(offset: .zero)

    func at(_ milliseconds: Int) -> ManualClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func theFirstTenInAWindowAreLoggedTheRestCounted() {
        var limiter = Limiter()
        for step in 0..<10 { #expect(limiter.admit(at: at(step)) == .log(suppressed: 0)) }
        for step in 10..<1000 { #expect(limiter.admit(at: at(step)) == .suppress) }
        #expect(limiter.suppressed == 990)
        // Still inside the 10 s window.
        #expect(limiter.admit(at: at(9_999)) == .suppress)
        // The first rejection of the next window is logged and reports the suppressed ones.
        #expect(limiter.admit(at: at(10_000)) == .log(suppressed: 991))
        #expect(limiter.suppressed == 0)
        for step in 1..<10 { #expect(limiter.admit(at: at(10_000 + step)) == .log(suppressed: 0)) }
        #expect(limiter.admit(at: at(10_010)) == .suppress)
    }

    @Test func aQuietClientIsNeverSuppressed() {
        var limiter = Limiter()
        for second in 0..<100 { #expect(limiter.admit(at: at(second * 1_000)) == .log(suppressed: 0)) }
    }

    @Test func aFloodLogsAtMostBurstPlusOneLinePerWindow() {
        var limiter = Limiter(burst: 3, window: .seconds(1))
        var logged = 0
        var reported = 0
        // 100 rejections a second for 60 s.
        for step in 0..<6_000 {
            if case .log(let suppressed) = limiter.admit(at: at(step * 10)) {
                logged += 1
                reported += suppressed
            }
        }
        #expect(logged == 3 * 60)
        #expect(reported + limiter.suppressed == 6_000 - logged)  // every rejection is logged or counted
    }

    @Test func windowsStartAtTheFirstRejectionAfterTheLastOne() {
        var limiter = Limiter(burst: 1, window: .seconds(10))
        #expect(limiter.admit(at: at(0)) == .log(suppressed: 0))
        #expect(limiter.admit(at: at(5_000)) == .suppress)
        // Long after: a new window starts here, not on a 10 s grid.
        #expect(limiter.admit(at: at(25_000)) == .log(suppressed: 1))
        #expect(limiter.admit(at: at(34_999)) == .suppress)
        #expect(limiter.admit(at: at(35_000)) == .log(suppressed: 1))
    }
}

/// The per-user cap on log lines for rejections that end a connection, on a stepped clock.
@Suite struct UserRejectionLogsTests {
    typealias Logs = UserRejectionLogs<ManualClock.Instant>
    let start = ManualClock.Instant(offset: .zero)

    func at(_ milliseconds: Int) -> ManualClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test("ten lines per user per window, whatever the number of connections; each user has its own allowance")
    func tenPerUser() {
        var logs = Logs()
        for step in 0..<10 { #expect(logs.admit(uid: 65534, at: at(step)) == .log(suppressed: 0)) }
        for step in 10..<200 { #expect(logs.admit(uid: 65534, at: at(step)) == .suppress) }
        #expect(logs.admit(uid: 1000, at: at(200)) == .log(suppressed: 0))
        #expect(logs.admit(uid: 65534, at: at(10_000)) == .log(suppressed: 190))
        #expect(Logs.note(suppressed: 190, uid: 65534) == " (190 more connections of uid 65534 closed the same way were not logged)")
        #expect(Logs.note(suppressed: 1, uid: 7) == " (1 more connection of uid 7 closed the same way was not logged)")
        #expect(Logs.note(suppressed: 0, uid: 7) == "")
        #expect(Logs.note(suppressed: 3, uid: 7, kind: .refusedConnection) == " (3 more refused connections of uid 7 were not logged)")
        #expect(Logs.note(suppressed: 1, uid: 7, kind: .rejectedRequest) == " (1 more rejected request of uid 7 was not logged)")
    }

    @Test func eachUserGetsTheConfiguredAllowance() {
        var logs = Logs(burst: 1, window: .seconds(10))
        #expect(logs.admit(uid: 1, at: at(0)) == .log(suppressed: 0))
        #expect(logs.admit(uid: 1, at: at(1)) == .suppress)
        #expect(logs.admit(uid: 2, at: at(2)) == .log(suppressed: 0))
        #expect(logs.admit(uid: 1, at: at(10_000)) == .log(suppressed: 1))
    }

    @Test("bounded: past its capacity a user whose window ended makes room first, one still counting keeps its count")
    func bounded() {
        var logs = Logs(capacity: 2)
        _ = logs.admit(uid: 1, at: at(0))
        for step in 0..<11 { _ = logs.admit(uid: 2, at: at(step)) }  // uid 2: one suppressed
        // 11 s later uid 1's window has ended, uid 2 still has a suppressed count: uid 1 goes.
        #expect(logs.admit(uid: 3, at: at(11_000)) == .log(suppressed: 0))
        #expect(logs.count == 2)
        #expect(logs.admit(uid: 2, at: at(11_001)) == .log(suppressed: 1))
    }
}

/// The per-user caps through the control plane: a user who opens connection after
/// connection logs ten lines per window of each kind, not ten (or one) per connection.
@Suite struct ConnectionRejectionLoggingTests {
    @Test("rejected requests: ten lines per user per window, however many connections send them")
    func rejectedRequestsFromManyConnectionsOfOneUserLogTenLines() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        for _ in 0..<25 {
            let client = try server.connect(Peers.user)
            let bad = (1...3).map { requestLine("framerate.v1.Nope/Nothing", nil, id: $0) }.joined(separator: ",")
            _ = try client.call("[\(bad)]")
            client.close()
        }
        #expect(log.messages.filter { $0.hasPrefix("request rejected:") }.count == 10)
        let other = try server.connect(Peers.root)
        _ = try other.call(requestLine("framerate.v1.Nope/Nothing", nil, id: 1))
        #expect(log.messages.filter { $0.hasPrefix("request rejected:") }.count == 11)
    }

    @Test("link registered and released lines: a hundred per user per window, then one that counts the rest; another user keeps its own")
    func linkLinesOfARegisterLoopAreLimitedPerUser() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(logHandler: log)
        func linkLines() -> [String] {
            log.entries.filter { ["link-registered", "link-released"].contains($0.metadata["event"]) }.map(\.message)
        }
        // 60 Register and Invalidate pairs over 6 connections: 120 lines wanted.
        for _ in 0..<6 {
            let client = try server.connect(Peers.user)
            for _ in 0..<10 {
                let link = try client.result(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":60}}"#)["link"]?.int64Value
                _ = try client.result(.invalidate, #"{"link":\#(try #require(link))}"#)
            }
            client.close()
        }
        #expect(linkLines().count == CompositorCore.linkLogBurst)
        // Another user's lines are its own.
        let root = try server.connect(Peers.root)
        _ = try root.result(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":60}}"#)
        #expect(linkLines().count == CompositorCore.linkLogBurst + 1)
        // A window later the user's next line says how many were left out.
        server.clock.set(server.clock.now.advanced(by: .seconds(11)))
        _ = try server.connect(Peers.user).result(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":60}}"#)
        let last = try #require(linkLines().last)
        #expect(last.hasSuffix(" (20 more link registrations and releases of uid \(Peers.user.uid) were not logged)"), "\(last)")
        root.close()
    }

    @Test("refused connections: ten lines per user per window, then one that counts the rest")
    func refusedConnectionsOfOneUserLogTenLines() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(limits: .init(connections: 1, reservedConnections: 0), logHandler: log)
        let holder = try server.connect(Peers.root)
        for _ in 0..<30 {
            let refused = try server.connect(Peers.user)
            _ = try refused.lines()
            #expect(!refused.channel.isActive)
        }
        #expect(log.messages.filter { $0.hasPrefix("client rejected:") }.count == 10)
        // A window later the next one says how many were left out.
        server.clock.set(server.clock.now.advanced(by: .seconds(11)))
        _ = try server.connect(Peers.user).lines()
        let last = try #require(log.messages.last { $0.hasPrefix("client rejected:") })
        #expect(last.hasSuffix(" (20 more refused connections of uid \(Peers.user.uid) were not logged)"), "\(last)")
        holder.close()
    }

    @Test func oversizedLinesFromManyConnectionsOfOneUserLogTenLines() throws {
        let log = RecordingLogHandler()
        let server = ServerHarness(limits: .init(lineLength: 1024), logHandler: log)
        for _ in 0..<25 {
            let client = try server.connect(Peers.user)
            try client.sendBytes(String(repeating: "x", count: 2048) + "\n")
            _ = try client.lines()
        }
        let rejections = log.messages.filter { $0.hasPrefix("request rejected: line longer than 1024 bytes") }
        #expect(rejections.count == 10, "\(rejections)")
        // Another user (root) is logged as usual.
        let other = try server.connect(Peers.root)
        try other.sendBytes(String(repeating: "x", count: 2048) + "\n")
        _ = try other.lines()
        #expect(log.messages.filter { $0.hasPrefix("request rejected: line longer than 1024 bytes") }.count == 11)
    }
}

import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// Per-user limits, the connections reserved for root and the admin group, and the
/// partial-line timeout (issue "Hostile input", item 2).
@Suite struct UserLimitTests {
    static func peer(uid: UInt32, pid: Int32) -> PeerCredentials {
        PeerCredentials(pid: pid, uid: uid, gid: uid, groups: [], command: "user\(uid)")
    }

    @Test func oneUserFillingItsShareNeverLocksOutRootOrTheAdminGroup() throws {
        let server = ServerHarness(limits: .init(connections: 10, connectionsPerUser: 100, reservedConnections: 3))
        // Two unprivileged users take every connection they may: 10 - 3.
        var open: [TestClient] = []
        for index in 0..<7 { open.append(try server.connect(Self.peer(uid: 50_000 + UInt32(index % 2), pid: Int32(1000 + index)))) }
        let refused = try server.connect(Self.peer(uid: 50_002, pid: 2000))
        let refusal = try #require(try refused.lines().first)
        #expect(refusal.contains(#""code":8"#) && refusal.contains("RESOURCE_EXHAUSTED"))
        #expect(refusal.contains("--max-connections 10, of which 3 are reserved for root and the admin group"))
        #expect(!refused.channel.isActive)
        // Root and an admin still get in, up to the global limit.
        let root = try server.connect(Peers.root)
        #expect(try root.result(.healthCheck)["status"] == "SERVING")
        let admin = try server.connect(Peers.admin)
        #expect(try admin.result(.healthCheck)["status"] == "SERVING")
        let third = try server.connect(Peers.root)
        let over = try server.connect(Peers.root)
        #expect(try over.lines().first?.contains("framerated already serves 10 connections") == true)
        // Closed connections give their room back (privileged ones count in the total too).
        for client in [root, admin, third, open[0]] { client.close() }
        let again = try server.connect(Self.peer(uid: 50_000, pid: 3000))
        #expect(again.channel.isActive)
    }

    @Test func perUserConnectionLinkAndWatchLimitsNameTheLimitAndItsValue() throws {
        let server = ServerHarness(limits: .init(connectionsPerUser: 2, linksPerUser: 3, watchesPerUser: 2))
        let user = Self.peer(uid: 50_010, pid: 10)
        let first = try server.connect(user)
        let second = try server.connect(user)
        let third = try server.connect(user)
        #expect(try third.lines().first?.contains("uid 50010 already holds 2 connections (the per-user limit, --max-connections-per-user 2)") == true)

        _ = try first.register(30, 60, 60)
        _ = try first.register(30, 60, 60)
        let last = try second.register(30, 60, 60)
        let error = try second.error(.register, #"{"range":{"minimum":30,"maximum":60}}"#)
        #expect(error.grpcStatus == .resourceExhausted)
        #expect(error.message.contains("uid 50010 already holds 3 links (the per-user limit, --max-links-per-user 3)"))
        // Invalidating gives one back; root is never limited per user.
        _ = try second.result(.invalidate, #"{"link":\#(last)}"#)
        _ = try second.register(30, 60, 60)
        let root = try server.connect(Peers.root)
        for _ in 0..<5 { _ = try root.register(30, 60, 60) }

        _ = try first.result(.watch)
        _ = try second.result(.watch)
        let watchError = try first.error(.watch)
        #expect(watchError.grpcStatus == .resourceExhausted && watchError.message.contains("(the per-user limit, --max-watches-per-user 2)"))
        // Closing a connection releases its links and watches from the user's account.
        second.close()
        #expect(server.core.usage[50_010] == UserUsage.Holdings(connections: 1, links: 2, watches: 1))
        _ = try first.lines()  // the watch's linkRemoved events
        _ = try first.result(.watch)
    }

    @Test func aLineThatNeverEndsTimesOutAndTheConnectionCloses() throws {
        let server = ServerHarness(limits: .init(partialLineTimeout: .seconds(10)))
        let client = try server.connect(Peers.user)
        try client.sendBytes(#"{"jsonrpc":"2.0","id":1,"method":"grpc.health.v1.Health/Check"}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"#)
        #expect(try client.lines() == [#"{"jsonrpc":"2.0","id":1,"result":{"status":"SERVING"}}"#])
        server.loop.advanceTime(by: .seconds(9))
        try client.sendBytes(#""method":"#)  // more of the same line: the deadline does not move
        #expect(client.channel.isActive)
        server.loop.advanceTime(by: .seconds(1))
        let lines = try client.lines()
        #expect(lines.count == 1)
        #expect(lines.first?.contains("a request line took longer than 10.0 seconds to arrive; the connection is closed") == true)
        #expect(!client.channel.isActive)
    }

    @Test func linesThatCompleteInTimeNeverTimeOut() throws {
        let server = ServerHarness(limits: .init(partialLineTimeout: .seconds(10)))
        let client = try server.connect(Peers.user)
        for id in 1...5 {
            try client.sendBytes(#"{"jsonrpc":"2.0","id":\#(id),"#)
            server.loop.advanceTime(by: .seconds(6))
            try client.sendBytes(#""method":"grpc.health.v1.Health/Check"}"# + "\n")
            server.loop.advanceTime(by: .seconds(6))
        }
        #expect(try client.lines().count == 5)
        #expect(client.channel.isActive)
    }

    /// A client that pipelines requests (or is read 16 KiB at a time while paced) sees most
    /// reads end inside its next line. Each line still arrives within the timeout, so the
    /// deadline is the open line's: a read that completes a line restarts it for the line it
    /// opens, whether or not the read ends on a newline.
    @Test func readsThatCompleteOneLineAndOpenTheNextNeverTimeOut() throws {
        let server = ServerHarness(limits: .init(partialLineTimeout: .seconds(10)))
        let client = try server.connect(Peers.user)
        try client.sendBytes(#"{"jsonrpc":"2.0","id":1,"#)
        for id in 1...5 {
            server.loop.advanceTime(by: .seconds(6))
            // The rest of line `id`, and the start of line `id + 1`: no read ends on a newline.
            try client.sendBytes(#""method":"grpc.health.v1.Health/Check"}"# + "\n" + #"{"jsonrpc":"2.0","id":\#(id + 1),"#)
        }
        #expect(try client.lines().count == 5)
        #expect(client.channel.isActive, "closed although every line arrived within 6 s")
        // The line left open still times out, 10 s after it opened.
        server.loop.advanceTime(by: .seconds(10))
        #expect(try client.lines().first?.contains("a request line took longer than 10.0 seconds to arrive") == true)
        #expect(!client.channel.isActive)
    }
}

import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import FrameRateTesting
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// Per-user pacing through the control plane: an unprivileged user over its reply rate has
/// its next request wait, exactly as long as the rate says; root never waits.
@Suite struct PacingTests {
    static let health = #"{"jsonrpc":"2.0","id":1,"method":"grpc.health.v1.Health/Check"}"#

    /// Moves the daemon's clock and the control loop's timers on together.
    static func advance(_ server: ServerHarness, by duration: Duration) {
        server.clock.set(server.clock.now.advanced(by: duration))
        server.loop.advanceTime(by: .nanoseconds(WireTime.nanoseconds(of: duration)))
    }

    @Test func aUserOverItsReplyRateWaitsItsTurnAndRootNever() throws {
        let log = RecordingLogHandler()
        let rate = 4096
        let server = ServerHarness(
            limits: .init(pacing: UserPacingLimits(loopShare: 1, loopBurst: .seconds(60), replyBytesPerSecond: rate, replyBurstBytes: 0)),
            logHandler: log
        )
        let user = try server.connect(Peers.user)
        try user.sendBytes(String(repeating: Self.health + "\n", count: 3))
        let first = try user.lines()
        try #require(first.count == 1, "the first request is answered at once, the others wait: \(first)")
        // Its reply (and newline) costs bytes / rate seconds; the next one waits exactly that.
        let wait = Duration.nanoseconds(Int64((Double(first[0].utf8.count + 1) * 1e9 / Double(rate)).rounded(.up)))
        Self.advance(server, by: wait - .microseconds(100))
        #expect(try user.lines().isEmpty, "still paying for the first reply")
        Self.advance(server, by: .microseconds(100))
        #expect(try user.lines().count == 1)
        Self.advance(server, by: wait)
        #expect(try user.lines().count == 1)

        // Root is never paced; the journal says why the user waited, and how to change it.
        let root = try server.connect(Peers.root)
        try root.sendBytes(String(repeating: Self.health + "\n", count: 3))
        #expect(try root.lines().count == 3)
        let paced = log.messages.filter { $0.hasPrefix("requests paced for ") }
        #expect(paced.count == 1, "one line per connection per 10 s: \(paced)")
        #expect(paced.first?.contains("uid \(Peers.user.uid) is over its share of the control loop (100 %, --max-loop-share-per-user)") == true)
        #expect(paced.first?.contains("reply rate (4096 bytes/s, --max-reply-rate-per-user)") == true)
    }

    @Test func theRateIsSharedByAllTheUsersConnections() throws {
        let rate = 4096
        let server = ServerHarness(
            limits: .init(pacing: UserPacingLimits(loopShare: 1, loopBurst: .seconds(60), replyBytesPerSecond: rate, replyBurstBytes: 0))
        )
        let first = try server.connect(Peers.user)
        let second = try server.connect(Peers.user)
        _ = try first.lines()
        _ = try second.lines()
        try first.send(Self.health)
        #expect(try first.lines().count == 1)
        // Another connection of the same user pays the same debt.
        try second.send(Self.health)
        #expect(try second.lines().isEmpty)
        Self.advance(server, by: .seconds(1))
        #expect(try second.lines().count == 1)
    }
}

import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing
@testable import FrameRateServer

/// The old daemon's side of a restart handover, on the stepped server harness with real
/// socket pairs: stopping every connection (reads and handling), the
/// snapshot's records, and closing its copies without releasing a link or sending a byte.
@Suite("Restart handover: the stopping daemon")
struct HandoverPreparationTests {
    @Test("every connection is packaged with its owner, socket inode and watches; a request arriving meanwhile waits; closing releases nothing")
    func prepareAndFinish() throws {
        let harness = ServerHarness()
        let first = try harness.connect(socketBuffer: 1 << 16)
        let second = try harness.connect(socketBuffer: 1 << 16)
        let fast = try first.register(120, 120, 120, extra: #","highFrameRate":true"#)
        let slow = try second.register(30, 30, 30)
        _ = try second.request(.watch, "{}", id: 2)
        for _ in 0..<5 { _ = try harness.runNextVsync() }
        _ = try first.lines()
        _ = try second.lines()

        var package: HandoverPackage?
        harness.core.prepareHandover(drainTimeout: .milliseconds(100)).assumeIsolated().whenSuccess { package = $0 }
        harness.loop.run()
        let prepared = try #require(package)
        #expect(prepared.descriptors.count == 2)
        #expect(prepared.snapshot.sessions.count == 2)
        #expect(Set(prepared.snapshot.sessions.map(\.inode)) == Set(prepared.descriptors.compactMap { SystemCall.inode(of: $0) }))
        #expect(prepared.snapshot.sessions.map(\.watches) == [[], [1]])
        #expect(prepared.snapshot.lastWatch == 1)
        let links = prepared.snapshot.compositor.displays[0].links
        #expect(links.map(\.link.rawValue) == [fast, slow])
        #expect(links[0].pacing.sequence >= 5)

        // A request that arrives now is not handled: the connection no longer reads.
        try first.send(#"{"jsonrpc":"2.0","id":9,"method":"framerate.v1.Health/Check"}"#)
        #expect(try first.lines().isEmpty)

        // The snapshot survives its encoding and restores the same compositor.
        let decoded = try HandoverSnapshot(decoding: prepared.snapshot.encoded())
        #expect(decoded == prepared.snapshot)

        var finished = false
        harness.core.finishHandover().assumeIsolated().whenComplete { _ in finished = true }
        harness.loop.run()
        #expect(finished)
        // Closing this process's copies released no link and told the clients nothing.
        #expect(harness.compositor.linkCount == 2)
        #expect(try first.lines().isEmpty)
        #expect(try second.lines().isEmpty)
    }
}

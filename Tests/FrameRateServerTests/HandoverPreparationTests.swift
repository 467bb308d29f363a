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

    @Test("a batch paused between turns is finished before the handover: every message runs once, the reply is whole")
    func batchPausedMidwayIsFinished() throws {
        let harness = ServerHarness()
        let client = try harness.connect(socketBuffer: 1 << 20)
        let link = try client.register(60, 120, 60)
        _ = try client.lines()
        // 128 Updates of one link, each a new range; the last one's is what must hold.
        let ranges = (0..<128).map { index in index.isMultiple(of: 2) ? (30.0, 60.0, 30.0) : (60.0, 120.0, 60.0) }
        let final = (24.0, 48.0, 24.0)
        let messages = (ranges.dropLast() + [final]).enumerated().map { id, range in
            #"{"jsonrpc":"2.0","id":\#(id + 1),"method":"framerate.v1.DisplayLink/Update","params":{"link":\#(link),"range":{"minimum":\#(range.0),"maximum":\#(range.1),"preferred":\#(range.2)}}}"#
        }
        // Each read of the daemon's clock now takes 1 ms: the 2 ms turn budget runs out
        // after a message or two, and the rest of the batch waits for the next turn.
        harness.clock.advanceOnEveryRead(by: .milliseconds(1))
        try client.send("[" + messages.joined(separator: ",") + "]")
        harness.loop.run()
        #expect(try client.nonTickLines().isEmpty, "the batch ran whole: nothing was paused")
        let rangeNow = { try #require(harness.compositor.checkpoint.displays[0].links.first { $0.link.rawValue == link }).configuration.range }
        #expect(try rangeNow() != (try FrameRateRange(minimum: final.0, maximum: final.1, preferred: final.2)))

        var package: HandoverPackage?
        harness.core.prepareHandover(drainTimeout: .milliseconds(100)).assumeIsolated().whenSuccess { package = $0 }
        harness.loop.run()
        let prepared = try #require(package)
        harness.clock.advanceOnEveryRead(by: .zero)

        // The rest ran before the connection was packaged, and its reply went out whole.
        let replies = try client.nonTickLines()
        try #require(replies.count == 1)
        guard case .array(let responses) = try JSONValue(parsing: replies[0]) else {
            Issue.record("not a batch reply: \(replies[0])")
            return
        }
        #expect(responses.map { $0["id"] } == (1...128).map { JSONValue.number(JSONNumber($0)) })
        #expect(responses.allSatisfy { $0["result"] != nil && $0["error"] == nil })
        let packaged = try #require(prepared.snapshot.compositor.displays[0].links.first { $0.link.rawValue == link })
        #expect(packaged.configuration.range == (try FrameRateRange(minimum: final.0, maximum: final.1, preferred: final.2)))
        #expect(try rangeNow() == packaged.configuration.range)
        harness.core.finishHandover().assumeIsolated().whenComplete { _ in }
        harness.loop.run()
    }
}

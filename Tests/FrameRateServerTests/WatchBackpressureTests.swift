import FrameRatePosix
import FrameRateProtocol
import Testing

@testable import FrameRateServer

/// A watcher that stops reading loses events rather than growing the daemon's memory
/// (docs/security.md): once its writer passes the high-water mark, no more event is queued
/// for it, even within the loop turn in which it crossed the mark.
@Suite struct WatchBackpressureTests {
    @Test("events stop queuing for a watcher that does not read as soon as its writer passes the high-water mark")
    func eventsForAWatcherThatDoesNotReadStopAtTheHighWaterMark() throws {
        let highWater = 8 * 1024
        let server = ServerHarness(limits: .init(outboundHighWater: highWater))
        // The watcher's socket holds about 4 KiB, and nothing reads it.
        let watcher = try server.connect(Peers.root, socketBuffer: 4096)
        _ = try watcher.result(.watch)
        let client = try server.connect(Peers.root)
        let link = try client.register(30, 60, 60)
        _ = try client.lines()

        // Lines of 128 Updates, each an event of about 500 bytes for the watcher, all sent
        // at once: the control loop handles several of them in one turn.
        let toggles = (0..<128).map { index in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"framerate.v1.DisplayLink/Update","params":{"link":\#(link),"paused":\#(index % 2 == 0)}}"#
        }
        let batch = "[" + toggles.joined(separator: ",") + "]"
        try client.sendBytes(Array(repeating: batch + "\n", count: 8).joined())
        let replies = try client.lines()
        #expect(replies.count == 8, "every batch answered")

        let session = try #require(server.core.sessions.values.first { !$0.watches.isEmpty })
        // One event may go past the mark (the one that crossed it); 8 × 128 events would be
        // about half a megabyte.
        #expect(session.writer.queuedBytes <= highWater + 1024, "\(session.writer.queuedBytes) bytes queued for a watcher that does not read")
        #expect(!session.writer.isWritable)
    }
}

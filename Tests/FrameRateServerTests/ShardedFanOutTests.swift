import FrameRateModel
import FrameRateProtocol
@testable import FrameRateServer
import FrameRateTesting
import Synchronization
import Testing

/// The tick plane with two fan-out threads (`--fanout-threads 2`): the leader, stepped by
/// the test, and one helper on its own thread. Connections are dealt to shards by slot;
/// each connection's lines must still leave from one thread, in order, whatever mix of
/// displays and cadences a wake-up carries.
@Suite struct ShardedFanOutTests {
    /// Two fixed 60 Hz displays from one start: every wake-up processes both displays' vsyncs.
    static let twoDisplays = [
        DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .fixed60),
        DisplayConfiguration(id: DisplayID(rawValue: 1), profile: .fixed60),
    ]

    @Test("with two fan-out threads, every connection gets each of its links' ticks once, in order, from both displays in one wake-up")
    func shardsKeepEachConnectionsOrderAcrossDisplays() throws {
        let server = ServerHarness(displays: Self.twoDisplays, fanOutThreads: 2)
        let period = Duration.seconds(1.0 / 60)
        let periodSeconds = 1.0 / 60
        // Four connections: slots 0 to 3, two on each shard. Each has a 60 Hz and a 30 Hz
        // link on display 0 and a 30 Hz link on display 1: each display's vsync encodes its
        // own field segments, which a tick must not borrow from the other display's.
        var clients: [(client: TestClient, links: [UInt64: (display: Int, every: Int)])] = []
        for _ in 0..<4 {
            let client = try server.connect(socketBuffer: 1 << 18)
            var links: [UInt64: (display: Int, every: Int)] = [:]
            links[try client.register(60, 60, 60)] = (0, 1)
            links[try client.register(30, 30, 30)] = (0, 2)
            links[try client.register(30, 30, 30, extra: #","display":1"#)] = (1, 2)
            _ = try client.lines()  // nothing but ticks from here on
            clients.append((client, links))
        }
        let start = try #require(server.nextWake)
        let vsyncs = 12
        for _ in 0..<vsyncs { try server.runNextVsync() }
        #expect(server.clock.now == start.advanced(by: period * (vsyncs - 1)))

        // Both shards sent: the helper's thread, not only the leader.
        let progress = server.shared.read { $0.progress }
        #expect(progress.helpers[0].sent.load(ordering: .acquiring) >= UInt64(vsyncs))
        #expect(progress.leaderSent.load(ordering: .acquiring) >= UInt64(vsyncs))

        for (index, entry) in clients.enumerated() {
            let ticks = try TickTests.ticks(entry.client.lines())
            // Each link: one tick per interval, sequences 1, 2, 3, … with nothing skipped,
            // and its timestamps on its display's grid, one interval apart.
            for (link, shape) in entry.links {
                let own = ticks.filter { $0.link.rawValue == link }
                let expected = (vsyncs + shape.every - 1) / shape.every
                #expect(own.count == expected, "connection \(index) link \(link) (display \(shape.display), every \(shape.every)): \(own.count) ticks")
                #expect(own.map(\.sequence) == Array(1...UInt64(expected)))
                #expect(own.allSatisfy { $0.skipped == 0 })
                // The fields shared per cadence: this link's, not another cadence's or display's.
                let interval = periodSeconds * Double(shape.every)
                #expect(own.allSatisfy { abs($0.callbackRate - 60 / Double(shape.every)) < 1e-9 }, "link \(link): \(own.map(\.callbackRate))")
                #expect(own.allSatisfy { abs($0.targetTimestamp - $0.timestamp - interval) < 1e-6 }, "link \(link): wrong targets")
                for (first, second) in zip(own, own.dropFirst()) {
                    let gap = second.timestamp - first.timestamp
                    #expect(abs(gap - interval) < 1e-6, "link \(link): \(gap) s between ticks")
                }
            }
            // The connection's lines in the order the vsyncs happened (both displays share
            // the grid): a later vsync's tick never comes before an earlier one's.
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp }, "connection \(index) out of order")
            #expect(ticks.count == entry.links.values.reduce(0) { $0 + (vsyncs + $1.every - 1) / $1.every })
        }
    }

    /// Every batch was sent by both threads before the close (the harness waits for the
    /// helper), so the closed connection's writer is let go at once, not at a later vsync.
    @Test("a connection on the helper's shard that closes between vsyncs is let go at once; the leader's keeps ticking")
    func aClosedConnectionOnTheHelpersShardIsLetGoAtOnce() throws {
        let server = ServerHarness(displays: Self.twoDisplays, fanOutThreads: 2)
        let first = try server.connect(socketBuffer: 1 << 16)
        let second = try server.connect(socketBuffer: 1 << 16)
        _ = try first.register(60, 60, 60)
        _ = try second.register(60, 60, 60)
        _ = try first.lines()
        for _ in 0..<3 { try server.runNextVsync() }
        #expect(server.shared.read { $0.progress.helpers[0].sent.load(ordering: .acquiring) } == 3)  // slot 1: the helper's
        second.close()
        #expect(server.shared.read { $0.retiredWriterCount } == 0)
        try server.runNextVsync()
        let ticks = try TickTests.ticks(first.lines())
        #expect(ticks.map(\.sequence) == [1, 2, 3, 4])
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// GetState's cached encoding over a real socket (issue 9 §1, the GetState floods): a
/// reply larger than the socket's send buffer makes the connection's writer unwritable,
/// then writable again; that flip is the tick plane's bookkeeping, not a change GetState
/// shows, so it must not throw away the encoding. (It did: every reply above the
/// high-water mark invalidated its own cache entry, so each GetState of a flood
/// re-encoded the whole state, about 4 ms for 1,000 links on the release build.)
@Suite("GetState's encoding is reused over a real socket", .serialized)
struct StateCacheIntegrationTests {
    @Test("replies above the send buffer: consecutive GetStates carry the same encoding (the same `now`)")
    func largeRepliesReuseTheEncoding() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        // 16 connections × 60 paused links: a state of about 320 KB, above the 208 KiB
        // Unix socket send buffer, so each reply leaves the writer unwritable for a while.
        var holders: [FrameRateConnection] = []
        for _ in 0..<16 {
            let holder = try await daemon.connect()
            for _ in 0..<60 {
                _ = try await holder.register(range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 60), paused: true)
            }
            holders.append(holder)
        }
        // Five GetStates written at once, on a raw line session: the daemon handles them
        // back to back (the first encodes; the rest should copy its bytes), however slowly
        // this process decodes a 300 KB line.
        // The reads block (up to 30 s each): on a thread of their own.
        let socket = daemon.socket
        let lines = try await onOwnThread(named: "getstate-reader") {
            let reader = try LineSession.connect(toPath: socket, buffer: LineBuffer(maximumLineLength: 1 << 22))
            defer { reader.socket.close() }
            let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"framerate.v1.Compositor/GetState"}"#.utf8) + [0x0A]
            let requests = Array(repeating: request, count: 5).flatMap { $0 }
            try requests.withUnsafeBytes { try reader.socket.send($0) }
            // Read all five before decoding any: the daemon handles the next request only once
            // this side has read the previous reply (it stops while the connection is unwritable).
            var lines: [String] = []
            for _ in 0..<5 {
                lines.append(try unwrapped(try reader.readLine(deadline: MonotonicClock.nowNanoseconds + 30_000_000_000), "the daemon closed the connection"))
            }
            return lines
        }
        var stamps: [Double] = []
        for line in lines {
            let state = try CompositorState(json: try #require(try JSONValue(parsing: line)["result"]))
            #expect(state.displays.first?.links.count == 960)
            stamps.append(try #require(state.now))
        }
        // An encoding lives while nothing shown changes, within a 100 ms window of real
        // time (residency ratios change with time alone): four copies handled back to back
        // span at most one window boundary unless the daemon stalls for 200 ms, so at least
        // two consecutive replies share their encoding, and with it their `now`.
        let reused = zip(stamps, stamps.dropFirst()).filter { $0 == $1 }.count
        #expect(reused >= 1, "every GetState was encoded anew: now = \(stamps)")
        for holder in holders { await holder.close() }
    }
}

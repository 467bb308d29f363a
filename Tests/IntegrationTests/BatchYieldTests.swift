import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// A batch spread over turns of the control loop (`LineInProgress`): a batch of 128
/// `DisplayLink/Update`s, each re-arbitrating and announced to 16 watches, was one
/// piece of loop time (about 18 ms on the release build, 90 ms before events were encoded
/// once), during which no other client was answered. Now another client's call is answered
/// between the batch's messages, except on a virtual-clock daemon, where time moves only
/// between lines and a batch therefore runs whole.
@Suite("A long batch yields to other clients", .serialized)
struct BatchYieldTests {
    @Test(
        "a Health/Check sent once a 128-Update batch has begun is answered before the batch, except on a virtual clock",
        arguments: [false, true]
    )
    func otherClientsAreAnsweredMidBatch(virtualClock: Bool) async throws {
        let daemon = try await Daemon.start(virtualClock ? ["--clock", "virtual"] : [])
        defer { daemon.kill() }
        let socket = daemon.socket
        let (batchReply, answeredMidBatch) = try await onOwnThread(named: "batch-yield") { () throws -> (String, Bool) in
            let deadline = { MonotonicClock.nowNanoseconds + 30_000_000_000 }
            func connect() throws -> LineSession {
                try LineSession.connect(toPath: socket, buffer: LineBuffer(maximumLineLength: 1 << 22))
            }
            func send(_ line: String, on session: LineSession) throws {
                try Array((line + "\n").utf8).withUnsafeBytes { try session.socket.send($0) }
            }
            func request(_ id: Int, _ method: V1Method, _ params: String) -> String {
                #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method.rawValue)","params":\#(params)}"#
            }
            let batcher = try connect()
            let watcher = try connect()
            let other = try connect()
            defer { for session in [batcher, watcher, other] { session.socket.close() } }

            // 64 paused links (no ticks on this connection: only replies arrive on it).
            try send("[" + (1...64).map { request($0, .register, #"{"range":{"minimum":30,"maximum":60},"paused":true}"#) }.joined(separator: ",") + "]", on: batcher)
            let registered = try JSONValue(parsing: try unwrapped(try batcher.readLine(deadline: deadline()), "the Register batch's reply"))
            let links = try (registered.arrayValue ?? []).map { try unwrapped($0["result"]?["link"]?.int64Value, "a registered link in \(registered.jsonString)") }
            guard links.count == 64 else { throw BlockingStepFailure(description: "registered \(links.count) links, not 64") }

            // 16 watches: every Update of the batch is announced 16 times.
            for id in 1...16 {
                try send(#"{"jsonrpc":"2.0","id":\#(id),"method":"framerate.v1.Compositor/Watch"}"#, on: watcher)
                while try !unwrapped(try watcher.readLine(deadline: deadline()), "Watch \(id)'s reply").hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"#) {}
            }

            let updates = (0..<128).map { index in
                request(index + 1, .update, #"{"link":\#(links[index % 64]),"range":{"minimum":\#(10 + index % 50),"maximum":120}}"#)
            }
            try send("[" + updates.joined(separator: ",") + "]", on: batcher)
            // The watcher's first linkUpdated: the batch has begun.
            while try !unwrapped(try watcher.readLine(deadline: deadline()), "the batch's first event").contains(#""kind":"linkUpdated""#) {}
            try send(#"{"jsonrpc":"2.0","id":7,"method":"grpc.health.v1.Health/Check"}"#, on: other)
            let health = try unwrapped(try other.readLine(deadline: deadline()), "Health/Check's reply")
            guard health.contains("SERVING") else { throw BlockingStepFailure(description: "Health/Check answered \(health)") }
            // Had the batch run in one piece, its reply would be in the batcher's socket
            // already: it is written before the loop reads another connection.
            let batchAlreadyAnswered = try batcher.socket.waitUntilReadable(deadline: MonotonicClock.nowNanoseconds)
            let reply = try unwrapped(try batcher.readLine(deadline: deadline()), "the Update batch's reply")
            return (reply, !batchAlreadyAnswered)
        }
        if virtualClock {
            #expect(!answeredMidBatch, "a virtual-clock daemon paused a batch (time could move between its parts)")
        } else {
            #expect(answeredMidBatch, "the batch of 128 Updates was answered before another client's Health/Check sent after it began")
        }
        let results = try #require(try JSONValue(parsing: batchReply).arrayValue)
        #expect(results.count == 128)
        #expect(results.allSatisfy { $0["result"] != nil }, "\(batchReply.prefix(400))")
        // In request order, as one line.
        #expect(results.compactMap { $0["id"]?.int64Value } == Array(1...128))
    }
}

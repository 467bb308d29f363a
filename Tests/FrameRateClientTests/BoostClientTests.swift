import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateClient

/// The Swift client's boost and adaptive calls, against a scripted daemon.
@Suite struct BoostClientTests {
    @Test("register(adaptive:) sends adaptive; handle.boost sends Boost and decodes boostedUntil; boosted ticks arrive marked")
    func boostAndAdaptive() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 10, maximum: 120, preferred: 60)
        let registering = Task { try await connection.register(range: range, highFrameRate: true, adaptive: true) }
        let register = try await harness.nextRequest(.register)
        #expect(register.params?["adaptive"] == .bool(true))
        try await harness.deliver(Wire.registered(id: register.id, link: 7))
        let link = try await registering.value

        let boosting = Task { try await link.boost(duration: 0.25) }
        let boost = try await harness.nextRequest(.boost)
        #expect(boost.params == ["link": 7, "duration": 0.25])
        try await harness.deliver(
            Wire.result(id: boost.id, #"{"link":7,"refreshRate":120.0,"callbackRate":120.0,"decision":null,"limitedBy":null,"wanted":null,"got":null,"boostedUntil":1234.5}"#),
            #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":7,"sequence":1,"timestamp":1234.25,"targetTimestamp":1234.258333333,"duration":0.008333333,"refreshRate":120.0,"callbackRate":120.0,"boosted":true,"skipped":0}}"#
        )
        let result = try await boosting.value
        #expect(result.boostedUntil == 1234.5)
        #expect(result.status.refreshRate == 120 && result.status.link == LinkID(rawValue: 7))
        var ticks = link.ticks.makeAsyncIterator()
        #expect(await ticks.next()?.boosted == true)

        let ranged = Task { try await link.boost(duration: 1, range: try FrameRateRange(minimum: 80, maximum: 80, preferred: 80)) }
        let second = try await harness.nextRequest(.boost)
        #expect(second.params?["range"] == ["minimum": 80.0, "maximum": 80.0, "preferred": 80.0])
        try await harness.deliver(Wire.error(id: second.id, .status(.notFound, "link 7 does not exist on this connection")))
        await #expect(throws: FrameRateClientError.self) { try await ranged.value }
        await connection.close()
    }
}

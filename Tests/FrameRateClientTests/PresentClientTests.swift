import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateClient

@Suite("present() and Presented in the Swift client")
struct PresentClientTests {
    @Test("present sends a Present notification; Presented arrives on the link's stream")
    func presentAndPresented() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 120, maximum: 120, preferred: 120)
        let registering = Task { try await connection.register(range: range, label: "scroll", highFrameRate: true) }
        let register = try await harness.nextRequest(.register)
        try await harness.deliver(Wire.registered(id: register.id, link: 5), Wire.tick(link: 5, sequence: 1))
        let link = try await registering.value
        var ticks = link.ticks.makeAsyncIterator()
        #expect(await ticks.next()?.sequence == 1)

        try await link.present(sequence: 1, afterMinimumDuration: 0.05)
        #expect(
            try await harness.nextWritten()
                == [
                    "jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Present",
                    "params": ["link": 5, "sequence": 1, "afterMinimumDuration": 0.05],
                ]
        )
        try await harness.deliver(
            #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Presented","params":{"link":5,"sequence":1,"presentedTime":100.025,"expectedTime":100.008333333,"hitch":0.016666667,"dropped":false}}"#
        )
        var presented = link.presented.makeAsyncIterator()
        let frame = try #require(await presented.next())
        #expect(frame.link == link.id && frame.sequence == 1 && frame.presentedTime == 100.025 && frame.hitch == 0.016666667 && !frame.dropped)
        await connection.close()
        #expect(await presented.next() == nil)
    }

    @Test("a tick the daemon serving the link never sent is reported finished (FrameDone 0), not presented")
    func presentOfAnUnsentTick() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 60, maximum: 60, preferred: 60)
        let registering = Task { try await connection.register(range: range) }
        let register = try await harness.nextRequest(.register)
        try await harness.deliver(Wire.registered(id: register.id, link: 5), Wire.tick(link: 5, sequence: 1))
        let link = try await registering.value
        // Sequence 0 maps to no tick of this registration, as a tick from before a restart
        // does (TickSequencer); Present needs one the daemon sent (>= 1).
        try await link.present(sequence: 0, afterMinimumDuration: 0.05, contentVelocity: 10)
        #expect(
            try await harness.nextWritten()
                == ["jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone", "params": ["link": 5, "sequence": 0, "contentVelocity": 10.0]]
        )
        await connection.close()
    }
}

import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateClient

/// The Swift client's contentVelocity on frame-done and present, and update(adaptive:),
/// against a scripted daemon.
@Suite struct VelocityClientTests {
    @Test("frameDone and present send contentVelocity; update(adaptive:) sends adaptive")
    func velocityAndAdaptive() async throws {
        let harness = try await ConnectionHarness()
        let connection = harness.connection
        let range = try FrameRateRange(minimum: 120, maximum: 120, preferred: 120)
        let registering = Task { try await connection.register(range: range, highFrameRate: true) }
        let register = try await harness.nextRequest(.register)
        try await harness.deliver(Wire.registered(id: register.id, link: 7), Wire.tick(link: 7, sequence: 1))
        let link = try await registering.value
        var ticks = link.ticks.makeAsyncIterator()
        let tick = try #require(await ticks.next())

        try await link.frameDone(sequence: tick.sequence, contentVelocity: 200)
        let done = try await harness.nextWritten()
        #expect(done["method"]?.stringValue == V1Method.frameDone.rawValue)
        #expect(done["params"] == ["link": 7, "sequence": 1, "contentVelocity": 200.0])

        try await link.present(sequence: tick.sequence, contentVelocity: 0)
        let present = try await harness.nextWritten()
        #expect(present["method"]?.stringValue == V1Method.present.rawValue)
        #expect(present["params"]?["contentVelocity"] == JSONValue(0.0))

        // Without a velocity the field is absent.
        try await link.frameDone(sequence: tick.sequence)
        #expect(try await harness.nextWritten()["params"] == ["link": 7, "sequence": 1])

        let updating = Task { try await link.update(adaptive: true) }
        let update = try await harness.nextRequest(.update)
        #expect(update.params == ["link": 7, "adaptive": true])
        try await harness.deliver(
            Wire.result(id: update.id, #"{"link":7,"refreshRate":120.0,"callbackRate":120.0,"decision":null,"limitedBy":null,"wanted":null,"got":null}"#)
        )
        #expect(try await updating.value.callbackRate == 120)
        await connection.close()
    }

    @Test("FrameDone and Present params: contentVelocity must be finite and >= 0, naming the field")
    func validation() throws {
        for bad in [#"-1"#, #"1e400"#, #""fast""#] {
            let params = try JSONValue(parsing: #"{"link":1,"sequence":1,"contentVelocity":"# + bad + "}")
            #expect(throws: RPCError.self) { try FrameDoneRequest(params: params) }
            #expect(throws: RPCError.self) { try PresentRequest(params: params) }
        }
        let negative = try JSONValue(parsing: #"{"link":1,"sequence":1,"contentVelocity":-1}"#)
        do {
            _ = try FrameDoneRequest(params: negative)
            Issue.record("accepted a negative velocity")
        } catch {
            #expect("\(error)".contains("contentVelocity"))
        }
        #expect(try FrameDoneRequest(params: try JSONValue(parsing: #"{"link":1,"sequence":1,"contentVelocity":0}"#)).contentVelocity == 0)
        #expect(try PresentRequest(params: try JSONValue(parsing: #"{"link":1,"sequence":1,"contentVelocity":320.5}"#)).contentVelocity == 320.5)
    }
}

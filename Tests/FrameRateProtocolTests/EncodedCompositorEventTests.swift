import FrameRateModel
import FrameRateProtocol
import NIOCore
import Testing

@Suite("EncodedCompositorEvent: one serialization, every watch's line")
struct EncodedCompositorEventTests {
    /// The line the general encoder writes for `event` and `watch`.
    static func reference(_ event: CompositorEvent, watch: UInt64) -> String {
        var buffer = ByteBuffer()
        JSONRPCOutboundMessage.notification(method: V1Method.event.rawValue, params: event.params(watch: watch)).writeLine(into: &buffer)
        return String(buffer: buffer)
    }

    @Test(
        "every kind, at the smallest and largest watch ids: the bytes of the general encoder's line",
        arguments: [1, 9, 10, 4_096, 9_007_199_254_740_993, UInt64.max] as [UInt64]
    )
    func sameBytes(watch: UInt64) throws {
        let events = try CompositorEventTests.events
        #expect(Set(events.map(\.kind)) == Set(CompositorEvent.kinds))
        for event in events {
            let encoded = EncodedCompositorEvent(event)
            var buffer = ByteBuffer()
            encoded.writeLine(watch: watch, into: &buffer)
            let line = String(buffer: buffer)
            #expect(line == Self.reference(event, watch: watch))
            #expect(buffer.readableBytes <= encoded.lineLengthBound)
            #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        }
    }

    @Test("one encoding serves many watches in one buffer, each line whole and its own")
    func manyWatchesInOneBuffer() throws {
        let event = CompositorEvent.linkUpdated(display: DisplayID(rawValue: 0), link: try CompositorEventTests.link())
        let encoded = EncodedCompositorEvent(event)
        var buffer = ByteBuffer()
        for watch in 1...16 as ClosedRange<UInt64> { encoded.writeLine(watch: watch, into: &buffer) }
        let lines = String(buffer: buffer).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 17 && lines.last == "")
        for (index, line) in lines.dropLast().enumerated() {
            let params = try JSONValue(parsing: String(line))["params"]
            #expect(params?["watch"] == JSONValue(UInt64(index + 1)))
            #expect(try params.map { try CompositorEvent(params: $0) } == event)
        }
    }
}

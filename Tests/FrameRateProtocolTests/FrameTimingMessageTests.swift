import FrameRateModel
import FrameRateProtocol
import NIOCore
import Testing

/// The wire of frame timelines and frame latency (issue 14 §1-2): `timelines` and
/// `preferredFrameLatency` on Register and Update, `targetPresentationTimestamp` and
/// `timelines` on ticks (encoder, scanner, parser), `vsyncId` on Present.
@Suite struct FrameTimingMessageTests {
    private let range: JSONValue = ["minimum": 120, "maximum": 120]

    /// The message of the error `body` throws, or `nil` when it does not throw.
    private func message(_ body: () throws(RPCError) -> Void) -> (code: Int, text: String)? {
        do throws(RPCError) {
            try body()
            return nil
        } catch {
            return (error.code, error.message)
        }
    }

    @Test func registerAcceptsTimelinesAndLatencyWithDefaultsOfOne() throws {
        let plain = try RegisterRequest(params: ["range": range])
        #expect(plain.timelines == 1 && plain.preferredFrameLatency == 1)
        #expect(plain.jsonValue["timelines"] == nil && plain.jsonValue["preferredFrameLatency"] == nil)
        let timed = try RegisterRequest(params: ["range": range, "timelines": 7, "preferredFrameLatency": 2])
        #expect(timed.timelines == 7 && timed.preferredFrameLatency == 2)
        #expect(try RegisterRequest(params: timed.jsonValue) == timed)
    }

    @Test func registerRefusesTimelinesOutsideOneToSevenAndNonIntegersNamingTheBound() {
        for bad: JSONValue in [0, 8, -1, 1.5, 1e30] {
            let error = message { () throws(RPCError) in _ = try RegisterRequest(params: ["range": range, "timelines": bad]) }
            #expect(error?.code == -32602)
            #expect(error?.text.contains("timelines must be an integer in 1...7, got") == true, "\(bad): \(error?.text ?? "no error")")
        }
        // Not a number at all: refused as the wrong type.
        for bad: JSONValue in ["3", .bool(true), ["n": 3]] {
            let error = message { () throws(RPCError) in _ = try RegisterRequest(params: ["range": range, "timelines": bad]) }
            #expect(error?.code == -32602)
            #expect(error?.text.hasPrefix("timelines must be an integer, got") == true, "\(bad): \(error?.text ?? "no error")")
        }
    }

    @Test func registerAndUpdateRefuseLatencyOtherThanOneOrTwo() {
        for bad: JSONValue in [0, 3, 1.5, -2] {
            let register = message { () throws(RPCError) in _ = try RegisterRequest(params: ["range": range, "preferredFrameLatency": bad]) }
            #expect(register?.code == -32602)
            #expect(register?.text.contains("preferredFrameLatency must be an integer in 1...2") == true)
            let update = message { () throws(RPCError) in _ = try UpdateRequest(params: ["link": 1, "preferredFrameLatency": bad]) }
            #expect(update?.text.contains("preferredFrameLatency must be an integer in 1...2") == true)
        }
        let update = message { () throws(RPCError) in _ = try UpdateRequest(params: ["link": 1, "timelines": 8]) }
        #expect(update?.text.contains("timelines must be an integer in 1...7, got 8") == true)
    }

    @Test func updateKeepsAbsentValuesAndRoundTrips() throws {
        let keep = try UpdateRequest(params: ["link": 1])
        #expect(keep.timelines == nil && keep.preferredFrameLatency == nil)
        let change = try UpdateRequest(params: ["link": 1, "timelines": 3, "preferredFrameLatency": 2])
        #expect(change.timelines == 3 && change.preferredFrameLatency == 2)
        #expect(try UpdateRequest(params: change.jsonValue) == change)
    }

    @Test func presentCarriesVsyncIdAndRefusesNegativeOrFractionalOnes() throws {
        let present = try PresentRequest(params: ["link": 1, "sequence": 4, "vsyncId": 1234])
        #expect(present.vsyncId == 1234)
        #expect(try PresentRequest(params: present.jsonValue) == present)
        #expect(try PresentRequest(params: ["link": 1, "sequence": 4]).vsyncId == nil)
        for bad: JSONValue in [-1, 2.5, "7"] {
            let error = message { () throws(RPCError) in _ = try PresentRequest(params: ["link": 1, "sequence": 4, "vsyncId": bad]) }
            #expect(error?.code == -32602)
        }
    }

    @Test func theResultEchoesTimelinesAndLatency() throws {
        var result = LinkStatusResult(link: LinkID(rawValue: 3), display: nil, refreshRate: 120, callbackRate: 120, decision: nil, limit: nil)
        #expect(result.jsonValue["timelines"] == nil)
        result.timelines = 3
        result.preferredFrameLatency = 2
        let parsed = try LinkStatusResult(json: result.jsonValue)
        #expect(parsed.timelines == 3 && parsed.preferredFrameLatency == 2)
    }

    @Test func aDefaultTickLineCarriesTargetPresentationTimestampEqualToTargetAndNoTimelines() throws {
        let shared = TickLineEncoder.sharedFields(
            timestamp: 1_000_000_000, targetTimestamp: 1_008_333_333, duration: 8_333_333, refreshRate: 120, callbackRate: 120,
            allocator: ByteBufferAllocator()
        )
        var line = ByteBufferAllocator().buffer(capacity: 256)
        TickLineEncoder.write(link: 3, sequence: 9, skipped: 0, shared: shared, into: &line)
        let text = String(buffer: line)
        #expect(text.hasSuffix(#","callbackRate":120.0,"targetPresentationTimestamp":1.008333333,"skipped":0}}"# + "\n"))
        #expect(!text.contains("timelines"))
        #expect(TickLineScanner.scan(line)?.sequence == 9)
        let parsed = try TickNotification(json: try parse(String(text.dropLast()))["params"])
        #expect(parsed.targetPresentationTimestamp == parsed.targetTimestamp && parsed.timelines.isEmpty)
    }

    @Test func aTimedTickLineCarriesItsTimelinesScansAndParsesBack() throws {
        let timelines = [
            TickLineEncoder.EncodedTimeline(vsyncId: 121, deadline: 1_008_333_333, presentationTime: 1_016_666_667),
            TickLineEncoder.EncodedTimeline(vsyncId: 122, deadline: 1_016_666_667, presentationTime: 1_025_000_000),
        ]
        let shared = TickLineEncoder.sharedFields(
            timestamp: 1_000_000_000, targetTimestamp: 1_008_333_333, duration: 8_333_333, refreshRate: 120, callbackRate: 120,
            targetPresentationTimestamp: 1_016_666_667, timelines: timelines, allocator: ByteBufferAllocator()
        )
        var line = ByteBufferAllocator().buffer(capacity: 512)
        TickLineEncoder.write(link: 3, sequence: 9, skipped: 1, shared: shared, into: &line)
        let text = String(buffer: line)
        #expect(
            text.contains(
                #","targetPresentationTimestamp":1.016666667,"timelines":[{"vsyncId":121,"deadline":1.008333333,"presentationTime":1.016666667},{"vsyncId":122,"deadline":1.016666667,"presentationTime":1.025000000}],"skipped":1}}"#
            )
        )
        let fields = try #require(TickLineScanner.scan(line))
        #expect(fields.link == 3 && fields.sequence == 9 && fields.skipped == 1)
        let parsed = try TickNotification(json: try parse(String(text.dropLast()))["params"])
        #expect(parsed.targetPresentationTimestamp == 1.016666667)
        #expect(parsed.timelines == [
            TickTimeline(vsyncId: 121, deadline: 1.008333333, presentationTime: 1.016666667),
            TickTimeline(vsyncId: 122, deadline: 1.016666667, presentationTime: 1.025),
        ])
        #expect(try TickNotification(json: parsed.jsonValue) == parsed)
    }

    @Test func aTickWithMoreThanSevenTimelinesIsRefused() throws {
        let entry: JSONValue = ["vsyncId": 1, "deadline": 1.0, "presentationTime": 1.0]
        let params: JSONValue = [
            "link": 1, "sequence": 1, "timestamp": 1.0, "targetTimestamp": 1.0, "duration": 0.01, "refreshRate": 120,
            "callbackRate": 120, "skipped": 0, "timelines": .array(Array(repeating: entry, count: 8)),
        ]
        #expect(throws: RPCError.self) { try TickNotification(json: params) }
    }

    @Test func theCatalogDocumentsEveryNewField() {
        let register = ServiceCatalog.methods.first { $0.method == .register }?.params.map(\.name) ?? []
        #expect(register.contains("timelines") && register.contains("preferredFrameLatency"))
        let update = ServiceCatalog.methods.first { $0.method == .update }?.params.map(\.name) ?? []
        #expect(update.contains("timelines") && update.contains("preferredFrameLatency"))
        let tick = ServiceCatalog.methods.first { $0.method == .tick }?.params.map(\.name) ?? []
        #expect(tick.contains("targetPresentationTimestamp") && tick.contains("timelines[].vsyncId"))
        let present = ServiceCatalog.methods.first { $0.method == .present }?.params.map(\.name) ?? []
        #expect(present.contains("vsyncId"))
    }
}

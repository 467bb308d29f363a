import FrameRateModel
import FrameRateProtocol
import NIOCore
import Testing

/// The wire of boosts and adaptive links: `Boost` params, `boosted` on ticks (encoder,
/// scanner, parser), `adaptive` on Register and Update.
@Suite struct BoostMessageTests {
    @Test func aBoostedTickLineCarriesBoostedBeforeSkippedAndScansBack() throws {
        let shared = TickLineEncoder.sharedFields(
            timestamp: 1_000_000_000, targetTimestamp: 1_008_333_333, duration: 8_333_333, refreshRate: 120, callbackRate: 120,
            boosted: true, allocator: ByteBufferAllocator()
        )
        var line = ByteBufferAllocator().buffer(capacity: 256)
        TickLineEncoder.write(link: 3, sequence: 9, skipped: 0, shared: shared, into: &line)
        let text = String(buffer: line)
        #expect(text.hasSuffix(#","callbackRate":120.0,"boosted":true,"targetPresentationTimestamp":1.008333333,"skipped":0}}"# + "\n"))
        let fields = try #require(TickLineScanner.scan(line))
        #expect(fields.boosted && fields.link == 3 && fields.sequence == 9 && fields.skipped == 0)
        let parsed = try TickNotification(json: try parse(String(text.dropLast()))["params"])
        #expect(parsed.boosted)
        #expect(parsed.jsonValue["boosted"] == .bool(true))
    }

    @Test func anUnboostedTickLineHasNoBoostedFieldAndStillScans() throws {
        let shared = TickLineEncoder.sharedFields(
            timestamp: 1_000_000_000, targetTimestamp: 1_008_333_333, duration: 8_333_333, refreshRate: 120, callbackRate: 120,
            allocator: ByteBufferAllocator()
        )
        var line = ByteBufferAllocator().buffer(capacity: 256)
        TickLineEncoder.write(link: 3, sequence: 9, skipped: 2, shared: shared, into: &line)
        #expect(!String(buffer: line).contains("boosted"))
        let fields = try #require(TickLineScanner.scan(line))
        #expect(!fields.boosted && fields.skipped == 2)
        // `"boosted":false` is not canonical (the daemon never writes it): the scanner declines.
        let odd =
            #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":7,"sequence":42,"timestamp":1234.5,"targetTimestamp":1234.508333334,"duration":0.008333333,"refreshRate":120.0,"callbackRate":120.0,"boosted":false,"skipped":3}}"#
        #expect(TickLineScanner.scan(ByteBuffer(string: odd)) == nil)
    }

    @Test func boostParamsValidateDurationAndRange() throws {
        let request = try BoostRequest(params: ["link": 4, "duration": 0.25])
        #expect(request.link == LinkID(rawValue: 4) && request.duration == 0.25 && request.range == nil)
        #expect(request.durationValue == .milliseconds(250))
        // The shortest accepted durations still begin a boost: one nanosecond, not zero.
        #expect(try BoostRequest(params: ["link": 4, "duration": 1e-300]).durationValue == .nanoseconds(1))
        #expect(try BoostRequest(params: ["link": 4, "duration": 4e-10]).durationValue == .nanoseconds(1))
        #expect(try BoostRequest(params: ["link": 4, "duration": 5]).durationValue == .seconds(5))
        #expect(BoostRequest(link: LinkID(rawValue: 4), duration: .nan).durationValue == .nanoseconds(1))
        #expect(BoostRequest(link: LinkID(rawValue: 4), duration: 1e300).durationValue == .seconds(5))
        for bad: JSONValue in [0, -0.5, 5.5, "1", .null, .bool(true)] {
            #expect(throws: RPCError.self) { try BoostRequest(params: ["link": 4, "duration": bad]) }
        }
        #expect(throws: RPCError.self) { try BoostRequest(params: ["link": 4, "duration": 1, "extra": 1]) }
        let ranged = try BoostRequest(params: ["link": 4, "duration": 5, "range": ["minimum": 80, "maximum": 120, "preferred": 120]])
        #expect(ranged.range == (try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)))
        #expect(try BoostRequest(params: ranged.jsonValue) == ranged)
    }

    @Test func registerAndUpdateCarryAdaptive() throws {
        let register = try RegisterRequest(params: ["range": ["minimum": 120, "maximum": 120], "adaptive": true])
        #expect(register.adaptive)
        #expect(try RegisterRequest(params: register.jsonValue).adaptive)
        #expect(try !RegisterRequest(params: ["range": ["minimum": 120, "maximum": 120]]).adaptive)
        let update = try UpdateRequest(params: ["link": 1, "adaptive": false])
        #expect(update.adaptive == false)
        #expect(try UpdateRequest(params: ["link": 1]).adaptive == nil)
        #expect(throws: RPCError.self) { try UpdateRequest(params: ["link": 1, "adaptive": "yes"]) }
    }
}

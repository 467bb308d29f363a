import FrameRateProtocol
import NIOCore
import Testing

/// The shared segment of a Tick line, byte for byte: ``TickLineEncoder/sharedFields(timestamp:targetTimestamp:duration:refreshRate:callbackRate:boosted:targetPresentationTimestamp:timelines:allocator:)``
/// writes every part through one reservation, sized from the parts' bounds; each case here
/// reaches one of those bounds or one of its branches.
@Suite struct TickSharedFieldsTests {
    static func shared(
        timestamp: Int64 = 1_000_000_000, target: Int64 = 1_008_333_333, duration: Int64 = 8_333_333, refresh: Double = 120,
        callback: Double = 120, boosted: Bool = false, presentation: Int64? = nil, timelines: [TickLineEncoder.EncodedTimeline] = []
    ) -> String {
        let buffer = TickLineEncoder.sharedFields(
            timestamp: timestamp, targetTimestamp: target, duration: duration, refreshRate: refresh, callbackRate: callback,
            boosted: boosted, targetPresentationTimestamp: presentation, timelines: timelines, allocator: ByteBufferAllocator()
        )
        return String(buffer: buffer)
    }

    @Test func theDefaultSegment() {
        #expect(
            Self.shared()
                == #","timestamp":1.000000000,"targetTimestamp":1.008333333,"duration":0.008333333,"refreshRate":120.0,"callbackRate":120.0,"targetPresentationTimestamp":1.008333333,"skipped":"#
        )
    }

    @Test func extremeTimesTakeTheirWholeWidth() {
        #expect(
            Self.shared(timestamp: .max, target: .min, duration: -1, presentation: 0)
                == #","timestamp":9223372036.854775807,"targetTimestamp":-9223372036.854775808,"duration":-0.000000001,"refreshRate":120.0,"callbackRate":120.0,"targetPresentationTimestamp":0.000000000,"skipped":"#
        )
    }

    @Test func ratesThatAreNotWholeAreWrittenAsJSONNumberWritesThem() {
        for rate in [59.94, 0.5, 1e-300, 1_000_001, 1e300, 23.976023976023978] {
            let segment = Self.shared(refresh: rate, callback: rate)
            let text = JSONNumber(rate).text
            #expect(segment.contains(#","refreshRate":\#(text),"callbackRate":\#(text),"#), "\(rate): \(segment)")
        }
        #expect(Self.shared(refresh: 1_000_000, callback: 1).contains(#""refreshRate":1000000.0,"callbackRate":1.0,"#))
    }

    @Test func boostedAndSevenTimelinesAtTheirWidest() {
        let widest = TickLineEncoder.EncodedTimeline(vsyncId: .max, deadline: .min, presentationTime: .min)
        let segment = Self.shared(boosted: true, presentation: 2_000_000_000, timelines: Array(repeating: widest, count: 7))
        let entry = #"{"vsyncId":18446744073709551615,"deadline":-9223372036.854775808,"presentationTime":-9223372036.854775808}"#
        let expected = #","timestamp":1.000000000,"targetTimestamp":1.008333333,"duration":0.008333333,"refreshRate":120.0,"callbackRate":120.0,"boosted":true,"targetPresentationTimestamp":2.000000000,"timelines":["#
            + Array(repeating: entry, count: 7).joined(separator: ",") + #"],"skipped":"#
        #expect(segment == expected)
    }
}

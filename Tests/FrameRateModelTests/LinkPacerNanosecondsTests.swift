import Testing

@testable import FrameRateModel

/// The pacer compares in whole nanoseconds (``LinkPacer/nanoseconds(_:)``): to the nearest,
/// within a range whose sums and doubles cannot overflow, whatever a checkpoint holds.
@Suite struct LinkPacerNanosecondsTests {
    @Test("durations become the nearest whole nanosecond, negative ones too")
    func nearest() {
        #expect(LinkPacer.nanoseconds(.zero) == 0)
        #expect(LinkPacer.nanoseconds(.nanoseconds(5)) == 5)
        #expect(LinkPacer.nanoseconds(.seconds(1) / 120) == 8_333_333)  // 8,333,333.33 ns
        #expect(LinkPacer.nanoseconds(.seconds(1) / 60 * 2) == 33_333_333)
        #expect(LinkPacer.nanoseconds(.seconds(2) / 3) == 666_666_667)  // 666,666,666.67 ns
        #expect(LinkPacer.nanoseconds(.zero - .seconds(2) / 3) == -666_666_667)
        #expect(LinkPacer.nanoseconds(.seconds(1000) + .nanoseconds(1)) == 1_000_000_000_001)
    }

    @Test("durations past ±Int64.max / 4 nanoseconds saturate instead of trapping")
    func saturates() {
        #expect(LinkPacer.nanoseconds(.seconds(Int64.max)) == Int64.max / 4)
        #expect(LinkPacer.nanoseconds(.seconds(Int64.min)) == -(Int64.max / 4))
        #expect(LinkPacer.nanoseconds(.seconds(3_000_000_000)) == Int64.max / 4)  // 3 × 10^18 ns: past the bound
    }

    /// `Compositor/Advance` stops virtual time at 2·10⁹ s (`VirtualClock.latest`), under
    /// the ±2.3·10⁹ s the pacer holds since the display's origin (an epoch of 0 s and up).
    @Test("at 2·10⁹ s since the origin, the latest virtual time Advance allows, a late vsync still counts what it skipped")
    func countsAtTheLatestVirtualTime() throws {
        let period = Duration.seconds(1) / 120
        let start = Duration.seconds(1_999_999_000)
        var pacer = LinkPacer(cadence: CallbackCadence(range: try FrameRateRange(minimum: 120, maximum: 120, preferred: 120), refresh: 120))
        #expect(pacer.vsync(index: 0, at: start, period: period, canDeliver: true) == .deliver(sequence: 1, skipped: 0))
        #expect(pacer.vsync(index: 1, at: start + period, period: period, canDeliver: true) == .deliver(sequence: 2, skipped: 0))
        // Three vsyncs passed over: the next tick says so.
        #expect(pacer.vsync(index: 5, at: start + period * 5, period: period, canDeliver: true) == .deliver(sequence: 6, skipped: 3))
    }

    @Test("a pacer restored with a next target far in the future or past never traps")
    func extremeCheckpoints() {
        for target in [Duration.seconds(Int64.max), .seconds(Int64.min), .zero] {
            let checkpoint = LinkPacingCheckpoint(
                sequence: 5, pendingSkips: 0, lastDelivered: 5, lastFinished: 5, reportsFrameDone: false, nextTarget: target,
                lastDeliveredTime: nil, lastDeliveredInterval: nil, heldBackReported: false
            )
            var pacer = LinkPacer(cadence: CallbackCadence(range: try! FrameRateRange(minimum: 60, maximum: 60, preferred: 60), refresh: 60), restoring: checkpoint)
            for index in 0..<3 {
                _ = pacer.vsync(index: UInt64(index), at: .seconds(1) / 60 * index, period: .seconds(1) / 60, canDeliver: true)
            }
            #expect(pacer.sequence >= 5)
        }
    }
}

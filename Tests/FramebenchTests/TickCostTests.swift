import ArgumentParser
import FrameRatePosix
import Testing

@testable import framebench

/// `framebench tick-cost` counts what the real tick plane delivered to real socket pairs:
/// every link's tick at every vsync, the warm-up's apart from the measured ones.
@Suite struct TickCostTests {
    @Test("tick-cost delivers and counts every link's tick at every vsync, on either send path", arguments: ["io_uring", "send"])
    func countsEveryTick(sendPath: String) throws {
        let command = try TickCost.parse(["--links", "16", "--vsyncs", "5", "--warmup", "2", "--tick-sends", sendPath])
        let measurement = try command.measure()
        #expect(measurement.ticks == 16 * 5)
        #expect(measurement.expected == 16 * 5)
        #expect(measurement.warmupTicks == 16 * 2)
        #expect(measurement.stepNanoseconds > 0)
        if sendPath == "send" { #expect(measurement.sendPath == .sendCalls) }
    }

    @Test("tick-cost refuses an unknown send path and out-of-range counts")
    func refusesBadArguments() {
        #expect(throws: (any Error).self) { try TickCost.parse(["--tick-sends", "carrier-pigeon"]) }
        #expect(throws: (any Error).self) { try TickCost.parse(["--links", "0"]) }
        #expect(throws: (any Error).self) { try TickCost.parse(["--vsyncs", "0"]) }
    }
}

import ArgumentParser
import FrameRateModel
import Testing

@testable import framebench

/// `framebench arbitrate` times what it says: with velocity reports in force the panel
/// arbitrates apart from the grid (its decision counts the reporting links' table-rate
/// votes); without, it does not.
@Suite struct ArbitrateTests {
    @Test("with --velocity-reports the timed updates arbitrate the panel too; without, only the grid")
    func velocityReportsMakeThePanelArbitrate() throws {
        let plain = try Arbitrate.parse(["--links", "200", "--iterations", "10"]).measure()
        #expect(plain.panelDecision == nil)
        #expect(plain.rearbitrate.count == 10 && plain.decide.count == 10)

        let reporting = try Arbitrate.parse(["--links", "200", "--iterations", "10", "--velocity-reports", "3"]).measure()
        let panel = try #require(reporting.panelDecision)
        // 200 pt/s is 80 Hz on the phone's panel: the decision names link 1, the first
        // reporting link, with its table-rate vote and the velocity behind it.
        #expect(panel.reason.contains("link 1 (80, 80, 80) at 200 pt/s"), "\(panel.reason)")
        #expect(reporting.distinctVotes == plain.distinctVotes)
    }

    @Test("arbitrate refuses empty runs and more reports than links")
    func refusesBadArguments() {
        #expect(throws: (any Error).self) { try Arbitrate.parse(["--links", "0"]) }
        #expect(throws: (any Error).self) { try Arbitrate.parse(["--iterations", "0"]) }
        #expect(throws: (any Error).self) { try Arbitrate.parse(["--links", "10", "--velocity-reports", "11"]) }
        #expect(throws: (any Error).self) { try Arbitrate.parse(["--velocity-reports", "-1"]) }
    }
}

import FrameRateTesting
import FrameRateModel
import Testing

@testable import FrameRateServer

/// The per-connection cap on "request rejected" log lines, on a stepped clock.
@Suite struct RejectionLogLimiterTests {
    typealias Limiter = RejectionLogLimiter<ManualClock.Instant>
    let start = ManualClock.Instant(offset: .zero)

    func at(_ milliseconds: Int) -> ManualClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func theFirstTenInAWindowAreLoggedTheRestCounted() {
        var limiter = Limiter()
        for step in 0..<10 { #expect(limiter.admit(at: at(step)) == .log(suppressed: 0)) }
        for step in 10..<1000 { #expect(limiter.admit(at: at(step)) == .suppress) }
        #expect(limiter.suppressed == 990)
        // Still inside the 10 s window.
        #expect(limiter.admit(at: at(9_999)) == .suppress)
        // The first rejection of the next window is logged and reports the suppressed ones.
        #expect(limiter.admit(at: at(10_000)) == .log(suppressed: 991))
        #expect(limiter.suppressed == 0)
        for step in 1..<10 { #expect(limiter.admit(at: at(10_000 + step)) == .log(suppressed: 0)) }
        #expect(limiter.admit(at: at(10_010)) == .suppress)
    }

    @Test func aQuietClientIsNeverSuppressed() {
        var limiter = Limiter()
        for second in 0..<100 { #expect(limiter.admit(at: at(second * 1_000)) == .log(suppressed: 0)) }
    }

    @Test func aFloodLogsAtMostBurstPlusOneLinePerWindow() {
        var limiter = Limiter(burst: 3, window: .seconds(1))
        var logged = 0
        var reported = 0
        // 100 rejections a second for 60 s.
        for step in 0..<6_000 {
            if case .log(let suppressed) = limiter.admit(at: at(step * 10)) {
                logged += 1
                reported += suppressed
            }
        }
        #expect(logged == 3 * 60)
        #expect(reported + limiter.suppressed == 6_000 - logged)  // every rejection is logged or counted
    }

    @Test func windowsStartAtTheFirstRejectionAfterTheLastOne() {
        var limiter = Limiter(burst: 1, window: .seconds(10))
        #expect(limiter.admit(at: at(0)) == .log(suppressed: 0))
        #expect(limiter.admit(at: at(5_000)) == .suppress)
        // Long after: a new window starts here, not on a 10 s grid.
        #expect(limiter.admit(at: at(25_000)) == .log(suppressed: 1))
        #expect(limiter.admit(at: at(34_999)) == .suppress)
        #expect(limiter.admit(at: at(35_000)) == .log(suppressed: 1))
    }

    @Test func theNoteNamesTheCount() {
        #expect(Limiter.note(suppressed: 0) == "")
        #expect(Limiter.note(suppressed: 1) == " (1 more rejection on this connection was not logged)")
        #expect(Limiter.note(suppressed: 42) == " (42 more rejections on this connection were not logged)")
    }
}

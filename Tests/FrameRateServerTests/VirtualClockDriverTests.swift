import FrameRateModel
import FrameRateTesting
import Testing

@testable import FrameRateServer

/// The virtual clock's rule on its own, over a stepped clock: exact virtual and wall
/// instants for every decision, no threads, no sockets.
@Suite struct VirtualClockDriverTests {
    typealias Instant = ManualClock.Instant
    typealias Driver = VirtualClockDriver<ManualClock>
    static let epoch = Instant(offset: .seconds(1000))
    static let wall = Instant(offset: .seconds(5))
    static let timeout = Duration.seconds(1)
    static let linkA = LinkID(rawValue: 1)
    static let linkB = LinkID(rawValue: 2)

    static func driver() -> Driver { Driver(settings: .init(answerTimeout: timeout), epoch: epoch) }
    static func at(_ milliseconds: Int) -> Instant { epoch.advanced(by: .milliseconds(milliseconds)) }

    @Test func withNoLinkTimeStaysAtTheEpochUntilAdvanced() {
        var driver = Self.driver()
        let decision = driver.decide(unanswered: [], linksTick: false, nextDue: Self.at(500), wallNow: Self.wall)
        #expect(decision == .init(action: .idle))
        #expect(driver.now == Self.epoch)
    }

    @Test func anAdvanceStepsThroughEveryDueInstantThenStopsAtItsEnd() {
        var driver = Self.driver()
        driver.advance(by: .seconds(2))
        #expect(driver.advancingTo == Self.at(2000))
        // A rate change due at +250 ms, then a watchdog ping at +1500 ms, then nothing.
        #expect(driver.decide(unanswered: [], linksTick: false, nextDue: Self.at(250), wallNow: Self.wall).action == .step(at: Self.at(250)))
        #expect(driver.now == Self.at(250))
        #expect(driver.decide(unanswered: [], linksTick: false, nextDue: Self.at(1500), wallNow: Self.wall).action == .step(at: Self.at(1500)))
        // Something due after the advance's end is not reached: time stops at the end.
        #expect(driver.decide(unanswered: [], linksTick: false, nextDue: Self.at(3500), wallNow: Self.wall).action == .idle)
        #expect(driver.now == Self.at(2000))
        #expect(driver.advancingTo == nil)
        // Idle from now on: the next due instant is not reached without another Advance.
        #expect(driver.decide(unanswered: [], linksTick: false, nextDue: Self.at(3500), wallNow: Self.wall).action == .idle)
        #expect(driver.now == Self.at(2000))
    }

    @Test func advancesAddUp() {
        var driver = Self.driver()
        driver.advance(by: .milliseconds(300))
        driver.advance(by: .milliseconds(200))
        #expect(driver.advancingTo == Self.at(500))
        #expect(driver.decide(unanswered: [], linksTick: false, nextDue: nil, wallNow: Self.wall).action == .idle)
        #expect(driver.now == Self.at(500))
    }

    @Test func aTickingLinkWithEveryTickAnsweredJumpsToTheNextDueInstantAtOnce() {
        var driver = Self.driver()
        let first = driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall)
        #expect(first.action == .step(at: Self.at(8)))
        #expect(driver.now == Self.at(8))
        // Due instants are followed exactly, whatever the wall clock says.
        let second = driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall)
        #expect(second.action == .step(at: Self.at(16)))
    }

    @Test func anUnansweredTickHoldsTimeUntilItIsAnswered() {
        var driver = Self.driver()
        _ = driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall)
        let tick = UnansweredTick(link: Self.linkA, interval: 1)
        let waiting = driver.decide(unanswered: [tick], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall)
        #expect(waiting.action == .waitForAnswers(until: Self.wall.advanced(by: Self.timeout)))
        #expect(driver.now == Self.at(8))
        // Asked again later (another request), the deadline stays where it was.
        let again = driver.decide(unanswered: [tick], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall.advanced(by: .milliseconds(400)))
        #expect(again.action == .waitForAnswers(until: Self.wall.advanced(by: Self.timeout)))
        // Answered: time moves on at once.
        let answered = driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall.advanced(by: .milliseconds(500)))
        #expect(answered == .init(action: .step(at: Self.at(16))))
    }

    @Test func aSilentLinkIsGivenUpOnAfterTheTimeoutAndEachNewIntervalIsWaitedForAgain() {
        var driver = Self.driver()
        let silent = UnansweredTick(link: Self.linkA, interval: 1)
        _ = driver.decide(unanswered: [silent], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall)
        let late = Self.wall.advanced(by: Self.timeout)
        let gaveUp = driver.decide(unanswered: [silent], linksTick: true, nextDue: Self.at(8), wallNow: late)
        #expect(gaveUp == .init(action: .step(at: Self.at(8)), gaveUpOn: [Self.linkA]))
        // The same interval is not waited for again...
        let same = driver.decide(unanswered: [silent], linksTick: true, nextDue: Self.at(16), wallNow: late)
        #expect(same == .init(action: .step(at: Self.at(16))))
        // ...but the link's next interval (skipped while it stays busy) is, for a whole timeout.
        let next = UnansweredTick(link: Self.linkA, interval: 2)
        let waiting = driver.decide(unanswered: [next], linksTick: true, nextDue: Self.at(24), wallNow: late)
        #expect(waiting.action == .waitForAnswers(until: late.advanced(by: Self.timeout)))
    }

    @Test func onlyTheLinksStillSilentAreGivenUp() {
        var driver = Self.driver()
        let a = UnansweredTick(link: Self.linkA, interval: 4)
        let b = UnansweredTick(link: Self.linkB, interval: 1)
        _ = driver.decide(unanswered: [a, b], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall)
        // A answered meanwhile; B did not.
        let decision = driver.decide(unanswered: [b], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall.advanced(by: .seconds(2)))
        #expect(decision.gaveUpOn == [Self.linkB])
        #expect(decision.action == .step(at: Self.at(8)))
    }

    @Test func anAdvanceWhileLinksTickEndsOnceTimeHasPassedIt() {
        var driver = Self.driver()
        driver.advance(by: .milliseconds(10))
        #expect(driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall).action == .step(at: Self.at(8)))
        #expect(driver.advancingTo == Self.at(10))
        #expect(driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall).action == .step(at: Self.at(16)))
        #expect(driver.advancingTo == nil)
    }

    @Test func timeNeverMovesBackwards() {
        var driver = Self.driver()
        _ = driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(16), wallNow: Self.wall)
        // A due instant already past (a request at the current instant) runs at now.
        #expect(driver.decide(unanswered: [], linksTick: true, nextDue: Self.at(8), wallNow: Self.wall).action == .step(at: Self.at(16)))
        #expect(driver.now == Self.at(16))
    }
}

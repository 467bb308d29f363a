import FrameRateModel
import FrameRateTesting
import Testing

@testable import FrameRateServer

/// The tick plane's state machine on its own, over a stepped clock: exact instants for
/// every action, no threads, no sockets.
@Suite struct FanOutDriverTests {
    typealias Instant = ManualClock.Instant
    static let start = Instant(offset: .seconds(100))
    static let period = Duration.seconds(1.0 / 60)
    static let fixed60 = [DisplayConfiguration(id: DisplayID(rawValue: 0), profile: .fixed60)]

    static func compositor() -> Compositor<ManualClock> {
        Compositor(displays: fixed60, start: start)
    }

    static func at(_ vsyncs: Int, plus extra: Duration = .zero) -> Instant {
        start.advanced(by: period * vsyncs + extra)
    }

    static func delivered(_ wake: FanOutDriver<ManualClock>.Wake) -> [Tick<Instant>] {
        wake.reports.flatMap(\.ticks)
    }

    @Test func withoutLinksNothingIsDueAndAWakeDoesNothing() {
        var compositor = Self.compositor()
        var driver = FanOutDriver<ManualClock>(settings: .init(), start: Self.start)
        #expect(driver.nextDeadline(compositor: compositor) == nil)
        let wake = driver.wake(at: Self.at(1000), compositor: &compositor)
        #expect(wake.reports.isEmpty && wake.actions.isEmpty && wake.sleepUntil == nil)
    }

    @Test func anUnwritableConnectionGetsNoTicksAndIsDisconnectedAtItsDeadline() throws {
        var compositor = Self.compositor()
        let owner = OwnerID(rawValue: 7)
        let link = try compositor.register(owner: owner, configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60)), at: Self.start).link
        var driver = FanOutDriver<ManualClock>(settings: .init(unwritableTimeout: .milliseconds(100)), start: Self.start)

        var wake = driver.wake(at: Self.at(1), compositor: &compositor)
        #expect(Self.delivered(wake).map(\.link) == [link])
        #expect(wake.sleepUntil == Self.at(2))

        // Unwritable at vsync 1 + 2 ms: the next vsyncs deliver nothing (counted as skipped).
        driver.writabilityChanged(of: owner, writable: false, at: Self.at(1, plus: .milliseconds(2)))
        #expect(!driver.canDeliver(to: owner))
        for vsync in 2...6 {
            wake = driver.wake(at: Self.at(vsync), compositor: &compositor)
            #expect(Self.delivered(wake).isEmpty)
            #expect(!wake.actions.contains(.disconnect(owner)))
        }
        // The deadline (vsync 1 + 102 ms) is the next wake-up once it is earlier than the next vsync.
        wake = driver.wake(at: Self.at(7), compositor: &compositor)
        let deadline = Self.at(1, plus: .milliseconds(102))
        #expect(wake.sleepUntil == deadline, "the deadline comes before vsync 8")
        #expect(!wake.actions.contains(.disconnect(owner)))
        wake = driver.wake(at: deadline, compositor: &compositor)
        #expect(wake.actions.contains(.disconnect(owner)))
        #expect(driver.unwritableCount == 0)
    }

    @Test func writableAgainDeliversAndTheFirstTickCountsTheMissedIntervals() throws {
        var compositor = Self.compositor()
        let owner = OwnerID(rawValue: 9)
        _ = try compositor.register(owner: owner, configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60)), at: Self.start)
        var driver = FanOutDriver<ManualClock>(settings: .init(), start: Self.start)
        _ = driver.wake(at: Self.at(1), compositor: &compositor)
        driver.writabilityChanged(of: owner, writable: false, at: Self.at(1))
        for vsync in 2...4 { _ = driver.wake(at: Self.at(vsync), compositor: &compositor) }
        driver.writabilityChanged(of: owner, writable: true, at: Self.at(4, plus: .milliseconds(1)))
        let tick = try #require(Self.delivered(driver.wake(at: Self.at(5), compositor: &compositor)).first)
        #expect(tick.sequence == 5 && tick.skipped == 3)
    }

    /// A connection with a tick socket has two writers (replies, ticks), each reporting
    /// its own crossings: it stays unwritable until both drained, its deadline from the first.
    @Test func twoWritersOfOneConnectionAreUnwritableWhileEitherIs() throws {
        var compositor = Self.compositor()
        let owner = OwnerID(rawValue: 11)
        _ = try compositor.register(owner: owner, configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 60, maximum: 60, preferred: 60)), at: Self.start)
        var driver = FanOutDriver<ManualClock>(settings: .init(unwritableTimeout: .milliseconds(100)), start: Self.start)
        _ = driver.wake(at: Self.at(1), compositor: &compositor)
        driver.writabilityChanged(of: owner, writable: false, at: Self.at(1))  // the replies' writer
        driver.writabilityChanged(of: owner, writable: false, at: Self.at(2))  // the tick socket's
        driver.writabilityChanged(of: owner, writable: true, at: Self.at(3))  // one drains
        #expect(!driver.canDeliver(to: owner) && driver.unwritableCount == 1)
        let deadline = Self.at(1, plus: .milliseconds(100))
        #expect(driver.wake(at: Self.at(6), compositor: &compositor).actions.isEmpty)
        #expect(driver.wake(at: deadline, compositor: &compositor).actions.contains(.disconnect(owner)))

        // Both drain: writable again, and a later single crossing counts afresh.
        let other = OwnerID(rawValue: 12)
        driver.writabilityChanged(of: other, writable: false, at: Self.at(1))
        driver.writabilityChanged(of: other, writable: false, at: Self.at(1))
        driver.writabilityChanged(of: other, writable: true, at: Self.at(2))
        #expect(!driver.canDeliver(to: other))
        driver.writabilityChanged(of: other, writable: true, at: Self.at(2))
        #expect(driver.canDeliver(to: other))
        driver.writabilityChanged(of: other, writable: false, at: Self.at(3))
        #expect(!driver.canDeliver(to: other))
        driver.writabilityChanged(of: other, writable: true, at: Self.at(3))
        #expect(driver.canDeliver(to: other))
    }

    @Test func theWatchdogIsDueEveryIntervalAndNothingAfterStop() {
        var compositor = Self.compositor()
        var driver = FanOutDriver<ManualClock>(settings: .init(watchdogInterval: .seconds(2)), start: Self.start)
        #expect(driver.nextDeadline(compositor: compositor) == Self.start.advanced(by: .seconds(2)))
        let wake = driver.wake(at: Self.start.advanced(by: .seconds(2)), compositor: &compositor)
        #expect(wake.reports.isEmpty && wake.actions == [.pingWatchdog])
        #expect(wake.sleepUntil == Self.start.advanced(by: .seconds(4)))
        driver.stop()
        #expect(driver.isStopped)
        #expect(driver.nextDeadline(compositor: compositor) == nil)
        let stopped = driver.wake(at: Self.start.advanced(by: .seconds(10)), compositor: &compositor)
        #expect(stopped.reports.isEmpty && stopped.actions.isEmpty)
    }
}

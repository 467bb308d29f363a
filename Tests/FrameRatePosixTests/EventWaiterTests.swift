import FrameRatePosix
import FrameRateProtocol
import Testing

/// The tick plane's wait: a deadline, a wake-up from another thread, a writable socket.
@Suite struct EventWaiterTests {
    @Test func aDeadlineAlreadyPastReturnsAtOnce() throws {
        let waiter = try EventWaiter()
        let readiness = waiter.wait(until: MonotonicClock.nowNanoseconds - 1_000_000)
        #expect(readiness.deadlineReached && !readiness.woken && readiness.writable.isEmpty)
    }

    @Test func aWakeBeforeTheWaitIsNotLost() throws {
        let waiter = try EventWaiter()
        waiter.wake()
        waiter.wake()
        // No deadline: only the pending wake-up can end this wait.
        let readiness = waiter.wait(until: nil)
        #expect(readiness.woken && !readiness.deadlineReached)
    }

    @Test func aWatchedSocketIsReportedOnceWhenWritable() throws {
        let waiter = try EventWaiter()
        let (one, other) = try SystemCall.socketPair()
        defer {
            SystemCall.close(one)
            SystemCall.close(other)
        }
        waiter.watchWritable(one, token: 42)
        let first = waiter.wait(until: nil)
        #expect(first.writable == [42])
        // One-shot: not reported again until watched again.
        let second = waiter.wait(until: MonotonicClock.nowNanoseconds - 1)
        #expect(second.writable.isEmpty && second.deadlineReached)
        waiter.watchWritable(one, token: 43)
        #expect(waiter.wait(until: nil).writable == [43])
        waiter.unwatch(one)
        #expect(waiter.wait(until: MonotonicClock.nowNanoseconds - 1).writable.isEmpty)
    }
}

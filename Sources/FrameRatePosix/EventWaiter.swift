#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix

/// One thread's wait: until an absolute `CLOCK_MONOTONIC` deadline (a timerfd, which
/// applies no timer slack), until another thread calls ``wake()`` (an eventfd), or until
/// a watched socket becomes writable (epoll, one-shot). The tick fan-out sleeps here.
///
/// ``wait(until:)`` is called by its one owner thread; ``wake()``, ``watchWritable(_:token:)``
/// and ``unwatch(_:)`` are safe from any thread (epoll_ctl and eventfd writes are).
public final class EventWaiter: Sendable {
    /// A socket reported writable: the token it was watched with.
    public typealias Token = UInt64

    private let epoll: Int32
    private let timer: Int32
    private let wakeup: Int32
    private static let timerToken: Token = 0
    private static let wakeToken: Token = 1

    /// What ended one wait.
    public struct Readiness: Sendable {
        /// The deadline passed.
        public var deadlineReached = false
        /// ``wake()`` was called since the last wait.
        public var woken = false
        /// Tokens of watched sockets that became writable (or failed); each watch is one-shot.
        public var writable: [Token] = []
    }

    /// Creates the epoll set, the timer and the wake-up counter.
    public init() throws(PosixError) {
        let epoll = cframerated_epoll_create()
        guard epoll >= 0 else { throw PosixError(errno: errno, call: "epoll_create1") }
        let timer = cframerated_timerfd_create()
        guard timer >= 0 else {
            let error = PosixError(errno: errno, call: "timerfd_create")
            Glibc.close(epoll)
            throw error
        }
        let wakeup = cframerated_eventfd_create()
        guard wakeup >= 0 else {
            let error = PosixError(errno: errno, call: "eventfd")
            Glibc.close(epoll)
            Glibc.close(timer)
            throw error
        }
        _ = cframerated_epoll_add(epoll, timer, cframerated_epoll_in, Self.timerToken)
        _ = cframerated_epoll_add(epoll, wakeup, cframerated_epoll_in, Self.wakeToken)
        self.epoll = epoll
        self.timer = timer
        self.wakeup = wakeup
    }

    deinit {
        Glibc.close(epoll)
        Glibc.close(timer)
        Glibc.close(wakeup)
    }

    /// Wakes the waiting thread (or makes its next wait return at once).
    public func wake() {
        _ = cframerated_eventfd_signal(wakeup)
    }

    /// Reports `descriptor` once when it can take more bytes (or has failed).
    /// - Parameter token: any value but 0 and 1 (reserved for the timer and the wake-up).
    public func watchWritable(_ descriptor: Int32, token: Token) {
        precondition(token > Self.wakeToken, "tokens 0 and 1 are the waiter's own")
        let events = cframerated_epoll_out | cframerated_epoll_oneshot
        if cframerated_epoll_modify(epoll, descriptor, events, token) != 0 {
            _ = cframerated_epoll_add(epoll, descriptor, events, token)
        }
    }

    /// Stops watching `descriptor` (before it is closed: another descriptor of the same
    /// socket may stay open, so closing alone would not remove it from the set).
    public func unwatch(_ descriptor: Int32) {
        _ = cframerated_epoll_remove(epoll, descriptor)
    }

    /// Blocks until `deadline` (nanoseconds of `CLOCK_MONOTONIC`; `nil`: no deadline), a
    /// ``wake()``, or a watched socket's readiness, whichever comes first.
    public func wait(until deadline: Int64?) -> Readiness {
        // An absolute deadline already past fires at once; 0 disarms.
        _ = cframerated_timerfd_arm(timer, deadline.map { max(1, $0) } ?? 0)
        var readiness = Readiness()
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 64) { tokens in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { events in
                while true {
                    let count = cframerated_epoll_wait(epoll, tokens.baseAddress, events.baseAddress, 64, -1)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    for index in 0..<Int(count) {
                        switch tokens[index] {
                        case Self.timerToken:
                            if cframerated_counter_drain(timer) > 0 { readiness.deadlineReached = true }
                        case Self.wakeToken:
                            _ = cframerated_counter_drain(wakeup)
                            readiness.woken = true
                        default: readiness.writable.append(tokens[index])
                        }
                    }
                    if readiness.deadlineReached || readiness.woken || !readiness.writable.isEmpty { return }
                }
            }
        }
        return readiness
    }
}

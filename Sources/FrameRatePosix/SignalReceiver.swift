#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix
import Synchronization

/// Signals received as data (the self-pipe pattern): a handler writes each caught
/// signal's number to a pipe, and one thread takes them in order with ``next()``.
///
/// This is how the daemon stays asleep when idle. swift-service-lifecycle's signal
/// handling uses libdispatch signal sources, which start libdispatch's worker pool, whose
/// monitor then wakes the process once a second for as long as it lives. A thread blocked
/// in ``next()`` wakes only when a signal comes or ``stop()`` is called. (Blocking the
/// signals and reading a `signalfd` does not work in a Swift program with an async `main`:
/// its main thread ends in libdispatch's `sigsuspend` with an empty mask, and takes every
/// signal itself.)
///
/// One per process: signal dispositions are process-wide, and a newer receiver takes
/// the signals over. The pipe stays open until the process exits, because a handler
/// running on another thread may still be writing to it. ``next()`` is called by one
/// thread; ``stop()`` from any.
public final class SignalReceiver: Sendable {
    private let readEnd: Int32
    private let epoll: Int32
    private let wakeup: Int32
    private let stopping = Atomic<Bool>(false)
    private static let signalToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1

    /// Catches `signals` (numbers 1...255) from now on; until ``next()`` takes them they
    /// wait in the pipe (a full pipe, 64 KiB of signals unread, drops new ones).
    public init(catching signals: [Int32]) throws(PosixError) {
        var ends: [Int32] = [-1, -1]
        guard cframerated_pipe(&ends) == 0 else { throw PosixError(errno: errno, call: "pipe2") }
        let epoll = cframerated_epoll_create()
        let wakeup = cframerated_eventfd_create()
        guard epoll >= 0, wakeup >= 0 else {
            let error = PosixError(errno: errno, call: epoll < 0 ? "epoll_create1" : "eventfd")
            for descriptor in [ends[0], ends[1], epoll, wakeup] where descriptor >= 0 { Glibc.close(descriptor) }
            throw error
        }
        _ = cframerated_epoll_add(epoll, ends[0], cframerated_epoll_in, Self.signalToken)
        _ = cframerated_epoll_add(epoll, wakeup, cframerated_epoll_in, Self.wakeToken)
        let installed = signals.withUnsafeBufferPointer { cframerated_signals_forward($0.baseAddress, Int32($0.count), ends[1]) }
        guard installed == 0 else {
            let error = PosixError(errno: errno, call: "sigaction")
            cframerated_signals_stop_forwarding()
            Glibc.close(epoll)
            Glibc.close(wakeup)
            throw error  // the pipe stays open: a handler may hold its write end
        }
        readEnd = ends[0]
        self.epoll = epoll
        self.wakeup = wakeup
    }

    deinit {
        Glibc.close(epoll)
        Glibc.close(wakeup)
    }

    /// Blocks until a caught signal arrives and returns its number, or returns `nil` once
    /// ``stop()`` has been called.
    public func next() -> Int32? {
        var token: UInt64 = 0
        var events: UInt32 = 0
        var number: UInt8 = 0
        while !stopping.load(ordering: .acquiring) {
            let got = read(readEnd, &number, 1)
            if got == 1 { return Int32(number) }
            if got < 0 && errno != EAGAIN && errno != EINTR { return nil }
            let count = cframerated_epoll_wait(epoll, &token, &events, 1, -1)
            if count < 0 && errno != EINTR { return nil }
        }
        return nil
    }

    /// Makes ``next()`` return `nil`, now or at its next call. Signals caught later are
    /// dropped (their handler stays installed, so they no longer end the process).
    public func stop() {
        cframerated_signals_stop_forwarding()
        stopping.store(true, ordering: .releasing)
        _ = cframerated_eventfd_signal(wakeup)
    }
}

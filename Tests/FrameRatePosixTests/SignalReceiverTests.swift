#if canImport(Glibc)
import Glibc
#endif
import FrameRatePosix
import Testing

/// The daemon's signals as data: caught by a handler, taken in order by one thread.
/// SIGUSR2 and SIGWINCH: no other test uses them. SIGUSR2's default action would end the
/// test process, so each `raise` of it also checks that a handler caught it.
@Suite(.serialized) struct SignalReceiverTests {
    @Test func caughtSignalsAreTakenInOrderAndStopEndsTheWait() throws {
        let receiver = try SignalReceiver(catching: [SIGUSR2, SIGWINCH])
        // The handler runs inside raise(): the numbers are in the pipe when it returns.
        try Self.onThreadTakingSignals {
            #expect(raise(SIGUSR2) == 0)
            #expect(raise(SIGWINCH) == 0)
            #expect(raise(SIGUSR2) == 0)
        }
        #expect(receiver.next() == SIGUSR2)
        #expect(receiver.next() == SIGWINCH)
        #expect(receiver.next() == SIGUSR2)

        // Nothing pending: next() blocks until stop() from another thread ends it.
        let stopper = try OSThread.spawn(name: "stopper") { receiver.stop() }
        #expect(receiver.next() == nil)
        stopper.join()

        // Once stopped, a signal is dropped, not delivered with its default action (which
        // would end this process) and not queued.
        try Self.onThreadTakingSignals { #expect(raise(SIGUSR2) == 0) }
        #expect(receiver.next() == nil)
    }

    /// Runs `body` on a new thread with SIGUSR2 and SIGWINCH unblocked, and waits for it:
    /// the test runner's threads block signals (libdispatch's workers block them all), and
    /// a thread inherits its creator's mask, so `raise` there would leave them pending.
    private static func onThreadTakingSignals(_ body: @escaping @Sendable () -> Void) throws {
        let thread = try OSThread.spawn(name: "raiser") {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGUSR2)
            sigaddset(&signals, SIGWINCH)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            body()
        }
        thread.join()
    }
}

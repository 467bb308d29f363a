import Testing

@testable import framectl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Serialized: only one listener may exist at a time.
@Suite("framectl termination signals", .serialized)
struct TerminationSignalTests {
    /// A regression test: the handlers used to be installed from a concurrently
    /// started task through Dispatch signal sources, and about half of the
    /// signals sent once a command had printed its first line were ignored.
    @Test("a signal sent right after listen() returns is caught, not fatal; stop() ends the stream")
    func caughtFromTheStart() async {
        let termination = TerminationSignal.listen()
        kill(getpid(), SIGTERM)
        kill(getpid(), SIGINT)
        let first = await TerminationSignal.next(from: termination.signals)
        #expect(first == SIGTERM || first == SIGINT)
        termination.stop()
        var iterator = termination.signals.makeAsyncIterator()
        while await iterator.next() != nil {}
    }

    @Test("interrupting the work: the work is cancelled and the signal reported")
    func interruptsWork() async {
        let outcome = await Interruptible<Bool>.run {
            kill(getpid(), SIGINT)
            // Runs until cancelled by the signal.
            while !Task.isCancelled { await Task.yield() }
            return true
        }
        guard case .interrupted(let signal) = outcome else {
            Issue.record("not interrupted: \(outcome)")
            return
        }
        #expect(signal == SIGINT)
    }
}

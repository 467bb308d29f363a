import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The write end of the self-pipe the signal handler writes to, or -1; an
/// atomic, because the handler may only do async-signal-safe things.
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The C signal handler: writes the signal's number to the self-pipe.
private func writeSignalToPipe(_ number: Int32) {
    let savedErrno = errno
    let descriptor = signalPipeWriteEnd.load(ordering: .acquiring)
    if descriptor >= 0 {
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(descriptor, &byte, 1)
    }
    errno = savedErrno
}

/// Catches SIGINT (Ctrl-C) and SIGTERM without killing the process, so a
/// long-running command can clean up (invalidate its link) and exit 0.
///
/// ``listen()`` installs a plain signal handler synchronously, so every signal
/// sent after it returns is caught; the handler writes to a self-pipe that a
/// Dispatch read source drains. (A `DispatchSource` signal source is not used:
/// on Linux libdispatch installs its handler later, on its manager thread, so a
/// signal could meet `SIG_IGN` or the default action in between and be lost or
/// kill the process.) ``stop()`` restores the default action, so a second
/// Ctrl-C during cleanup still ends the process.
final class TerminationSignal {
    /// The signals handled: SIGINT and SIGTERM.
    static let handled: [Int32] = [SIGINT, SIGTERM]

    /// Each signal caught, in order; finishes after ``stop()``.
    let signals: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let source: (any DispatchSourceRead)?

    private init(signals: AsyncStream<Int32>, continuation: AsyncStream<Int32>.Continuation, source: (any DispatchSourceRead)?) {
        self.signals = signals
        self.continuation = continuation
        self.source = source
    }

    /// Starts catching SIGINT and SIGTERM; they are caught from the moment this returns.
    /// Only one listener may exist at a time.
    static func listen() -> TerminationSignal {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // No pipe: leave the default action (the process ends on Ctrl-C, without cleanup).
            return TerminationSignal(signals: signals, continuation: continuation, source: nil)
        }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        for end in ends {
            // Non-blocking both ways: the handler must never block, the drain loop must end.
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .global())
        source.setEventHandler {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) == 1 { continuation.yield(Int32(byte)) }
        }
        source.setCancelHandler {
            close(readEnd)
            close(writeEnd)
        }
        source.resume()
        signalPipeWriteEnd.store(writeEnd, ordering: .releasing)
        for number in handled { _ = signal(number, writeSignalToPipe) }
        return TerminationSignal(signals: signals, continuation: continuation, source: source)
    }

    /// Stops catching the signals: their default action applies again.
    func stop() {
        for number in Self.handled { _ = signal(number, SIG_DFL) }
        signalPipeWriteEnd.store(-1, ordering: .releasing)
        source?.cancel()
        continuation.finish()
    }

    /// Suspends until a signal arrives and returns its number, or returns
    /// `nil` when the calling task is cancelled or ``stop()`` was called.
    static func next(from signals: AsyncStream<Int32>) async -> Int32? {
        for await number in signals { return number }
        return nil
    }
}

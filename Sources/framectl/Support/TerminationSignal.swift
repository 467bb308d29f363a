import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waits for SIGINT (Ctrl-C) or SIGTERM without killing the process, so a
/// long-running command can clean up (invalidate its link) and exit 0.
enum TerminationSignal {
    /// The signals handled: SIGINT and SIGTERM.
    static let handled: [Int32] = [SIGINT, SIGTERM]

    /// Suspends until SIGINT or SIGTERM arrives and returns its number, or
    /// returns `nil` when the calling task is cancelled. While waiting, the
    /// signals are delivered here instead of terminating the process; afterwards
    /// their default action is restored, so a second Ctrl-C during cleanup still
    /// ends the process.
    static func next() async -> Int32? {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        let sources = handled.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            _ = signal(number, SIG_IGN)
            return source
        }
        defer {
            for number in handled { _ = signal(number, SIG_DFL) }
            for source in sources { source.cancel() }
        }
        for await number in signals { return number }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif
import FrameRatePosix
import FrameRateProtocol
import FrameRateServer
import FrameRateSystemd
import Logging
import ServiceLifecycle

/// The daemon's signals: SIGTERM and SIGINT stop it gracefully, SIGHUP reloads the server.
///
/// A handler writes each one to a pipe (``SignalReceiver``); one thread of this service
/// takes them from it and hands them to ``run()``. That thread sleeps until a signal
/// comes, so an idle daemon does not wake for signal handling: swift-service-lifecycle's
/// own signal handling uses libdispatch sources, which start libdispatch's worker pool and
/// its once-a-second monitor.
///
/// The receiver is made first thing in the daemon's `run`, before the socket and the
/// service group: a SIGTERM during start-up (a `systemctl stop` or restart right after a
/// start) waits in the pipe and stops the daemon gracefully once this service runs,
/// instead of killing it before it can remove its socket file or hand its connections over.
struct SignalService: Service {
    /// The signals the daemon handles.
    static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Catching ``handled`` since before start-up.
    let receiver: SignalReceiver
    let server: FrameRateServer
    let notifier: SystemdNotifier
    let logger: Logger

    /// Returns after SIGTERM or SIGINT, which shuts the group down gracefully (its
    /// termination behaviour), or when the group shuts down for another reason.
    func run() async throws {
        let receiver = self.receiver
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        let reader = try OSThread.spawn(name: "signals") {
            while let signal = receiver.next() { continuation.yield(signal) }
            continuation.finish()
        }
        for await signal in signals.cancelOnGracefulShutdown() {
            if signal == SIGHUP {
                notifier.reloading(monotonicMicroseconds: UInt64(MonotonicClock.now.nanoseconds / 1000))
                await server.reload()
                notifier.ready()
                continue
            }
            let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
            logger.notice("\(name): stopping gracefully", metadata: ["event": "signal-received", "signal": "\(name)"])
            break
        }
        // Nothing above throws, so this always runs; the thread ends as soon as it is stopped.
        receiver.stop()
        await reader.join()
    }
}

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
struct SignalService: Service {
    /// The signals the daemon handles.
    static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    let server: FrameRateServer
    let notifier: SystemdNotifier
    let logger: Logger

    /// Returns after SIGTERM or SIGINT, which shuts the group down gracefully (its
    /// termination behaviour), or when the group shuts down for another reason.
    func run() async throws {
        let receiver = try SignalReceiver(catching: Self.handled)
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        let reader = try OSThread.spawn(name: "signals") {
            while let signal = receiver.next() { continuation.yield(signal) }
            continuation.finish()
        }
        // The thread ends as soon as it is stopped: joining it blocks for microseconds.
        defer {
            receiver.stop()
            reader.join()
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
            return
        }
    }
}

import ArgumentParser
import FrameRateProtocol
import FrameRateServer
import FrameRateSystemd
import FrameRateVersion
import Logging
import ServiceLifecycle
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// `framerated`: the frame-rate hint broker daemon.
@main
struct Framerated: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framerated",
        abstract: "Broker display frame-rate hints: one refresh rate per display, ticks on its vsyncs.",
        discussion: """
            framerated simulates a compositor with variable-refresh displays. Client processes register \
            display links with a frame-rate range over newline-delimited JSON-RPC 2.0 on a Unix socket; \
            the daemon arbitrates every hint, cap and entitlement into one refresh rate per display and \
            streams each link's ticks, aligned to the display's vsyncs.

            Start it:        framerated
            Then, elsewhere: framectl register --min 80 --max 120 --high-frame-rate
                             framectl status

            Signals: SIGTERM/SIGINT stop gracefully (links get Closed UNAVAILABLE); SIGHUP re-reads \
            the admin group from the group database (after a groupadd) and logs the reload.
            """,
        version: "framerated \(FrameRateVersion.description)"
    )

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let level = try options.parsedLogLevel()
        let toJournal = options.logTarget == .journal || (options.logTarget == .auto && JournalLogHandler.isStandardErrorJournal)
        LoggingSystem.bootstrap { label in
            if toJournal {
                var handler = JournalLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StandardErrorLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "framerated")
        logger.logLevel = level

        // systemd socket activation: adopt the passed socket instead of binding.
        let listener: ServerConfiguration.Listener
        do {
            if let socket = try ListenedSockets.adopt(named: "framerated") {
                listener = .inherited(descriptor: socket.descriptor, path: options.socket ?? SocketPath.system)
            } else {
                listener = .path(try options.listenPath())
            }
        } catch {
            FileHandleStandardError.write("framerated: error: \(error)\n")
            throw ExitCode.failure
        }
        let notifier = SystemdNotifier()
        let server = FrameRateServer(
            configuration: try options.configuration(listener: listener), logger: logger,
            hooks: SystemdHooks.make(notifier: notifier)
        )
        let reloader = ReloadOnHangup(server: server, notifier: notifier)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: server, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: reloader),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            // Start-up failures (socket in use, bad path) are one line for the user, exit 1.
            FileHandleStandardError.write("framerated: error: \(error)\n")
            throw ExitCode.failure
        }
    }
}

/// Reloads the server on SIGHUP for as long as the group runs.
struct ReloadOnHangup: Service {
    let server: FrameRateServer
    let notifier: SystemdNotifier

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            notifier.reloading(monotonicMicroseconds: UInt64(MonotonicClock.now.nanoseconds / 1000))
            await server.reload()
            notifier.ready()
        }
    }
}

/// Unbuffered writes to standard error for messages printed before or after logging runs.
enum FileHandleStandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

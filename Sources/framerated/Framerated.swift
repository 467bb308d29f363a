import ArgumentParser
import FrameRatePosix
import FrameRateProtocol
import FrameRateServer
import FrameRateSystemd
import FrameRateVersion
import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// `framerated`: the frame-rate hint broker daemon.
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

            Signals: SIGTERM/SIGINT stop gracefully (links get Closed UNAVAILABLE; with \
            --keep-connections-across-restarts under systemd, every connection and link is handed to the \
            next start instead); SIGHUP re-reads the admin group from the group database (after a \
            groupadd) and logs the reload.
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
        // Before anything that a signal's default action would leave half done (see SignalService).
        let signalReceiver: SignalReceiver
        do {
            signalReceiver = try SignalReceiver(catching: SignalService.handled)
        } catch {
            FileHandleStandardError.write("framerated: error: cannot catch signals: \(error)\n")
            throw ExitCode.failure
        }

        // systemd socket activation: adopt the passed socket instead of binding; and what
        // the previous process left in the file descriptor store, if it handed over.
        let listener: ServerConfiguration.Listener
        let passed: Handover.Passed
        do {
            passed = try Handover.sort(try ListenedSockets.takeAll(), socketName: "framerated", logger: logger)
            if let socket = passed.listener {
                listener = .inherited(descriptor: socket.descriptor, path: options.socket ?? SocketPath.system)
            } else {
                listener = .path(try options.listenPath())
            }
        } catch {
            FileHandleStandardError.write("framerated: error: \(error)\n")
            throw ExitCode.failure
        }
        let notifier = SystemdNotifier()
        var hooks = SystemdHooks.make(notifier: notifier)
        if options.keepConnectionsAcrossRestarts {
            if FileDescriptorStore().isAvailable {
                hooks.handOver = Handover.storeHook(listenerFromSocketUnit: passed.listenerFromSocketUnit)
            } else {
                logger.warning(
                    "--keep-connections-across-restarts needs systemd's file descriptor store ($NOTIFY_SOCKET is not set): connections close on stop",
                    metadata: ["event": "handover-unavailable"]
                )
            }
        }
        var configuration = try options.configuration(listener: listener)
        configuration.adoption = passed.adoption
        let server = FrameRateServer(configuration: configuration, logger: logger, hooks: hooks)
        let signals = SignalService(receiver: signalReceiver, server: server, notifier: notifier, logger: logger)
        // No `gracefulShutdownSignals`: the group would watch them with libdispatch signal
        // sources, which start libdispatch's worker pool (see `SignalService`).
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: server, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: signals, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                ],
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

/// Unbuffered writes to standard error for messages printed before or after logging runs.
enum FileHandleStandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

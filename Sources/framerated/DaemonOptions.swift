import ArgumentParser
import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import FrameRateServer
import FrameRateVersion
import Logging

/// `framerated`'s command line, turned into a ``ServerConfiguration``.
struct DaemonOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Unix socket to listen on.",
            discussion: "Default: $FRAMERATED_SOCKET, else /run/framerated/framerated.sock for root, "
                + "else $XDG_RUNTIME_DIR/framerated.sock; without XDG_RUNTIME_DIR a non-root daemon needs --socket. "
                + "Ignored under systemd socket activation.",
            valueName: "path"
        )
    )
    var socket: String?

    @Option(
        name: .customLong("display"),
        help: ArgumentHelp(
            "A simulated display's profile; repeat for several displays (ids 0, 1, ...).",
            discussion: "promotion-phone (120 80 60 48 40 30 24 20 16 15 12 10 Hz, entitlement above 60), promotion-pad (120 60 40 30 24 Hz), fixed-60, or custom:R1,R2,... with an optional :entitlement suffix. Default: one promotion-phone.",
            valueName: "profile"
        )
    )
    var displays: [String] = []

    @Option(name: .long, help: ArgumentHelp("Never run a display above this rate (Hz).", valueName: "hz"))
    var maxRefreshRate: Double?

    @Option(name: .long, help: ArgumentHelp("Seconds with no voting link before a display idles to its lowest rate.", valueName: "seconds"))
    var idleTimeout: Double = 1

    @Option(name: .long, help: ArgumentHelp("Seconds a lower rate must be wanted before the display decreases.", valueName: "seconds"))
    var decreaseDwell: Double = 0.25

    @Option(name: .long, help: ArgumentHelp("Group whose members may change caps (besides root and the daemon's user).", valueName: "group"))
    var adminGroup: String = "framerated-admin"

    @Option(name: .long, help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String = "info"

    /// Where log lines go.
    enum LogTarget: String, ExpressibleByArgument, CaseIterable {
        case auto, journal, stderr
    }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "auto, journal or stderr.",
            discussion: "auto writes structured entries to the systemd journal when stderr is connected to it ($JOURNAL_STREAM), else plain lines to stderr."
        )
    )
    var logTarget: LogTarget = .auto

    @Option(name: .long, help: ArgumentHelp("Links one connection may hold.", valueName: "n"))
    var maxLinksPerConnection: Int = 64

    @Option(name: .long, help: ArgumentHelp("Connections open at once.", valueName: "n"))
    var maxConnections: Int = 4096

    @Option(name: .long, help: ArgumentHelp("Connections one unprivileged user may hold.", valueName: "n"))
    var maxConnectionsPerUser: Int = 256

    @Option(name: .long, help: ArgumentHelp("Links one unprivileged user may hold across its connections.", valueName: "n"))
    var maxLinksPerUser: Int = 1024

    @Option(name: .long, help: ArgumentHelp("Watches one unprivileged user may hold across its connections.", valueName: "n"))
    var maxWatchesPerUser: Int = 64

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The share of the control loop's time one unprivileged user may take before its requests wait.",
            discussion: "From 0.001 to 1; each request is charged the loop time it took. Requests wait, none is refused.",
            valueName: "share"
        )
    )
    var maxLoopSharePerUser: Double = UserPacingLimits().loopShare

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Reply bytes per second one unprivileged user may be sent before its requests wait.",
            discussion: "At least 4096; an 8 MiB burst goes at once. Requests wait, none is refused.",
            valueName: "bytes"
        )
    )
    var maxReplyRatePerUser: Int = UserPacingLimits().replyBytesPerSecond

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Of --max-connections, how many only root, the daemon's user and the admin group may use.",
            discussion: "Default: 32, or an eighth of --max-connections when that is smaller.",
            valueName: "n"
        )
    )
    var reservedConnections: Int?

    /// `--reserved-connections`, or its default for `--max-connections`.
    var effectiveReservedConnections: Int { reservedConnections ?? min(32, maxConnections / 8) }

    @Option(name: .long, help: ArgumentHelp("Seconds a request line may take to arrive before the connection is closed.", valueName: "seconds"))
    var partialLineTimeout: Double = 10

    @Option(name: .long, help: ArgumentHelp("Requests in one JSON-RPC batch.", valueName: "n"))
    var maxBatch: Int = 128

    @Option(name: .long, help: ArgumentHelp("Longest accepted request line, bytes.", valueName: "bytes"))
    var maxLineLength: Int = 1 << 16

    @Option(name: .long, help: ArgumentHelp("Seconds a client may leave its ticks unread before it is disconnected.", valueName: "seconds"))
    var unwritableTimeout: Double = 5

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Threads writing ticks.",
            discussion: "Default: half the online CPUs, at least 1 and at most 8 (this machine: \(ServerConfiguration.defaultFanOutThreads)). Each connection's ticks are written by one of them.",
            valueName: "n"
        )
    )
    var fanoutThreads: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How ticks reach the kernel: io_uring (one submission per vsync) or send (one call per connection).",
            discussion: "io_uring falls back to send, with a warning in the log, where the kernel or a seccomp filter refuses it.",
            valueName: "path"
        )
    )
    var tickSends: BatchSender.Path = .ioUring
    @Flag(
        help: ArgumentHelp(
            "On SIGTERM, hand every connection and the compositor to systemd's file descriptor store, for the next start to resume.",
            discussion: "Needs FileDescriptorStoreMax= in the unit (the shipped one sets it). Clients then see no disconnect across `systemctl restart`: they keep their link ids and sequence numbers, and the gap shows as one tick with skipped > 0. Without a service manager the flag is ignored, with a warning."
        )
    )
    var keepConnectionsAcrossRestarts = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "monotonic (real time) or virtual (deterministic, faster than real time, for testing frame-pacing code).",
            discussion: "virtual: time starts at --virtual-epoch and jumps to the next vsync as soon as every delivered tick of an unpaused link is answered with FrameDone or Present; with no unpaused link it moves only on Compositor/Advance. Tick timestamps are then virtual seconds, not CLOCK_MONOTONIC.",
            valueName: "clock"
        )
    )
    var clock: ClockArgument = .monotonic

    @Option(name: .long, help: ArgumentHelp("With --clock virtual: where virtual time starts, seconds.", valueName: "seconds"))
    var virtualEpoch: Double = 1000

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --clock virtual: wall seconds to wait for an unanswered tick before moving on (its link's interval counts as skipped).",
            valueName: "seconds"
        )
    )
    var virtualTimeout: Double = 1

    func validate() throws {
        if let fanoutThreads, !(1...64).contains(fanoutThreads) {
            throw ValidationError("--fanout-threads must be between 1 and 64, got \(fanoutThreads)")
        }
        _ = try parsedDisplays()
        _ = try parsedLogLevel()
        for (name, value) in [
            ("--idle-timeout", idleTimeout), ("--decrease-dwell", decreaseDwell), ("--unwritable-timeout", unwritableTimeout),
            ("--partial-line-timeout", partialLineTimeout),
        ]
        where !(value.isFinite && value >= 0 && value <= 86_400) {
            throw ValidationError("\(name) must be between 0 and 86400 seconds, got \(value)")
        }
        for (name, value) in [
            ("--max-links-per-connection", maxLinksPerConnection), ("--max-connections", maxConnections), ("--max-batch", maxBatch),
            ("--max-connections-per-user", maxConnectionsPerUser), ("--max-links-per-user", maxLinksPerUser),
            ("--max-watches-per-user", maxWatchesPerUser),
        ]
        where value < 1 {
            throw ValidationError("\(name) must be at least 1, got \(value)")
        }
        if !UserPacingLimits.shares.contains(maxLoopSharePerUser) {
            throw ValidationError(
                "--max-loop-share-per-user must be between \(UserPacingLimits.shares.lowerBound) and 1, got \(FrameRateMath.exactText(maxLoopSharePerUser))"
            )
        }
        if maxReplyRatePerUser < 4096 {
            throw ValidationError("--max-reply-rate-per-user must be at least 4096 bytes per second, got \(maxReplyRatePerUser)")
        }
        if let reservedConnections, reservedConnections < 0 || reservedConnections >= maxConnections {
            throw ValidationError("--reserved-connections must be at least 0 and below --max-connections (\(maxConnections)), got \(reservedConnections)")
        }
        if !(virtualEpoch.isFinite && virtualEpoch >= 0 && virtualEpoch <= 1e9) {
            throw ValidationError("--virtual-epoch must be between 0 and 1000000000 seconds, got \(virtualEpoch)")
        }
        if !(virtualTimeout.isFinite && virtualTimeout > 0 && virtualTimeout <= 3600) {
            throw ValidationError("--virtual-timeout must be above 0 and at most 3600 seconds, got \(virtualTimeout)")
        }
        if clock == .virtual && keepConnectionsAcrossRestarts {
            throw ValidationError("--keep-connections-across-restarts cannot be used with --clock virtual: virtual time does not continue across processes")
        }
        if maxLineLength < 1024 { throw ValidationError("--max-line-length must be at least 1024 bytes, got \(maxLineLength)") }
        if let maxRefreshRate, !FrameRateRange.acceptedRates.contains(maxRefreshRate) {
            let accepted = FrameRateRange.acceptedRates
            throw ValidationError(
                "--max-refresh-rate must be a number of Hz in \(FrameRateMath.format(accepted.lowerBound))...\(FrameRateMath.format(accepted.upperBound)), "
                    + "got \(FrameRateMath.exactText(maxRefreshRate))"
            )
        }
    }

    func parsedDisplays() throws -> [DisplayConfiguration] {
        let specifications = displays.isEmpty ? ["promotion-phone"] : displays
        return try specifications.enumerated().map { index, specification in
            do {
                return DisplayConfiguration(
                    id: DisplayID(rawValue: index), profile: try DisplayProfile.named(specification), configuredMaximum: maxRefreshRate
                )
            } catch {
                throw ValidationError("--display: \(error)")
            }
        }
    }

    func parsedLogLevel() throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
            throw ValidationError("--log-level must be one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", ") + ", got \(logLevel)")
        }
        return level
    }

    func configuration(listener: ServerConfiguration.Listener) throws -> ServerConfiguration {
        var configuration = ServerConfiguration(
            listener: listener,
            displays: try parsedDisplays(),
            governor: .init(idleTimeout: .seconds(idleTimeout), decreaseDwell: .seconds(decreaseDwell)),
            limits: .init(
                linksPerConnection: maxLinksPerConnection, connections: maxConnections, batchSize: maxBatch,
                lineLength: maxLineLength, unwritableTimeout: .seconds(unwritableTimeout),
                connectionsPerUser: maxConnectionsPerUser, linksPerUser: maxLinksPerUser, watchesPerUser: maxWatchesPerUser,
                reservedConnections: effectiveReservedConnections, partialLineTimeout: .seconds(partialLineTimeout),
                pacing: UserPacingLimits(loopShare: maxLoopSharePerUser, replyBytesPerSecond: maxReplyRatePerUser)
            ),
            adminGroup: adminGroup,
            fanOutThreads: fanoutThreads ?? ServerConfiguration.defaultFanOutThreads,
            tickSendPath: tickSends,
            version: DaemonVersion(semantic: FrameRateVersion.semantic, commit: FrameRateVersion.commit)
        )
        if clock == .virtual {
            configuration.clock = .virtual(
                epoch: MonotonicClock.Instant(seconds: virtualEpoch), answerTimeout: .nanoseconds(Int64((virtualTimeout * 1e9).rounded()))
            )
        }
        return configuration
    }

    /// The path to listen on by the shared rule (``SocketPath/listenPath(explicit:environment:userID:)``).
    /// - Throws: ``SocketPath/NoListenPath`` for a non-root user with no
    ///   `--socket`, `FRAMERATED_SOCKET` or `XDG_RUNTIME_DIR`.
    func listenPath() throws(SocketPath.NoListenPath) -> String { try SocketPath.listenPath(explicit: socket) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import FrameRateModel
public import FrameRatePosix
public import FrameRateProtocol

/// Everything `framerated` is told at start: where to listen, which displays
/// to simulate, timing rules and resource limits.
public struct ServerConfiguration: Sendable {
    /// Where to listen: a path to bind, or a listening socket inherited from systemd.
    public enum Listener: Sendable, Hashable {
        /// Bind a new socket at this path (a stale file from a dead daemon is replaced).
        case path(String)
        /// Adopt an already-listening socket (systemd socket activation); `path` is for logs and cleanup policy only.
        case inherited(descriptor: Int32, path: String?)
    }

    /// Where to listen.
    public var listener: Listener
    /// The simulated displays; the first is the default display.
    public var displays: [DisplayConfiguration]
    /// Idle timeout and decrease dwell.
    public var governor: RefreshRateGovernor<MonotonicClock>.Settings
    /// Resource limits.
    public var limits: Limits
    /// The group whose members may change caps (besides root and the daemon's own user).
    public var adminGroup: String
    /// File mode of a socket the daemon binds itself: `0o666` lets every local user register links.
    public var socketMode: UInt32
    /// Threads writing ticks (the tick plane's leader plus helpers). Default: ``defaultFanOutThreads``.
    public var fanOutThreads: Int
    /// How the fan-out threads hand a vsync's sends to the kernel: one io_uring submission
    /// (the default; `send` calls where the kernel refuses io_uring) or one `send` each.
    public var tickSendPath: BatchSender.Path
    /// The clock the compositor runs on (`--clock`): real time, or virtual time for tests.
    public var clock: ServerClock = .monotonic
    /// Connections and state the previous daemon handed over (systemd's file descriptor store), if any.
    public var adoption: Adoption?
    /// How long a handover waits for each connection's queued bytes to reach the kernel.
    public var handoverDrainTimeout: Duration = .milliseconds(500)
    /// The version Health/Check, ListServices and rpc.discover report (framerated passes its
    /// build's); `nil` (a server built directly, e.g. by the tests) reports none.
    public var version: DaemonVersion?

    /// Half the online CPUs (at least 1, at most 8): the other half is left to the clients
    /// the ticks go to and to the control loop.
    public static var defaultFanOutThreads: Int {
        let online = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return max(1, min(8, online / 2))
    }

    /// Builds a configuration; defaults: one `promotion-phone` display, 1 s idle timeout,
    /// 250 ms dwell, default limits, admin group `framerated-admin`, socket mode 0666, no version.
    public init(
        listener: Listener,
        displays: [DisplayConfiguration] = [DisplayConfiguration(id: DisplayID(rawValue: 0))],
        governor: RefreshRateGovernor<MonotonicClock>.Settings = .init(),
        limits: Limits = Limits(),
        adminGroup: String = "framerated-admin",
        socketMode: UInt32 = 0o666,
        fanOutThreads: Int = ServerConfiguration.defaultFanOutThreads,
        tickSendPath: BatchSender.Path = .ioUring,
        version: DaemonVersion? = nil
    ) {
        self.version = version
        self.fanOutThreads = max(1, fanOutThreads)
        self.tickSendPath = tickSendPath
        self.listener = listener
        self.displays = displays
        self.governor = governor
        self.limits = limits
        self.adminGroup = adminGroup
        self.socketMode = socketMode
    }

    /// Per-connection and global limits. Each refused request is answered with
    /// `8 RESOURCE_EXHAUSTED` and a message naming the limit.
    public struct Limits: Sendable, Hashable {
        /// Links one connection may hold. Default 64.
        public var linksPerConnection: Int
        /// Connections open at once. Default 4096.
        public var connections: Int
        /// Watches one connection may hold (one sees every event). Default 16.
        public var watchesPerConnection: Int
        /// Connections one unprivileged user may hold at once. Default 256.
        public var connectionsPerUser: Int
        /// Links one unprivileged user may hold across its connections. Default 1024.
        public var linksPerUser: Int
        /// Watches one unprivileged user may hold across its connections. Default 64.
        public var watchesPerUser: Int
        /// Of ``connections``, how many only root, the daemon's user and the admin group
        /// may use, so that unprivileged users filling theirs never lock them out. Default 32.
        public var reservedConnections: Int
        /// How long a request line may take to arrive completely (from its first byte to
        /// its newline) before the connection is closed with an error. Default 10 s.
        public var partialLineTimeout: Duration
        /// Requests one connection may have handled per turn of the control loop before
        /// other connections are served. Default 16.
        public var requestsPerTurn: Int
        /// Requests in one JSON-RPC batch. Default 128.
        public var batchSize: Int
        /// Longest accepted line, bytes. Default 64 KiB: a full batch of 128 requests fits
        /// several times over, and a client that never sends a newline costs at most that.
        public var lineLength: Int
        /// How long a connection may stay unwritable (not reading its ticks) before
        /// it is disconnected. Default 5 s.
        public var unwritableTimeout: Duration
        /// Connections of one unprivileged user that may hold unread replies (their
        /// writers above the high-water mark) before its other connections' requests wait
        /// (``UnreadReplyLimit``). Fixed.
        public static let unreadConnectionsPerUser = 8
        /// Outbound bytes queued for a connection above which it counts as unwritable
        /// and its ticks are dropped (counted in `skipped`). Default 64 KiB.
        public var outboundHighWater: Int
        /// The share of the control loop's time and the rate of reply bytes each
        /// unprivileged user may take before its next requests wait (``UserPacing``).
        public var pacing: UserPacingLimits

        /// Builds limits; see each property for its default.
        public init(
            linksPerConnection: Int = 64, connections: Int = 4096, batchSize: Int = 128, lineLength: Int = 1 << 16,
            unwritableTimeout: Duration = .seconds(5), outboundHighWater: Int = 64 * 1024,
            watchesPerConnection: Int = 16, requestsPerTurn: Int = 16,
            connectionsPerUser: Int = 256, linksPerUser: Int = 1024, watchesPerUser: Int = 64, reservedConnections: Int = 32,
            partialLineTimeout: Duration = .seconds(10), pacing: UserPacingLimits = UserPacingLimits()
        ) {
            self.pacing = pacing
            self.connectionsPerUser = connectionsPerUser
            self.linksPerUser = linksPerUser
            self.watchesPerUser = watchesPerUser
            self.reservedConnections = reservedConnections
            self.partialLineTimeout = partialLineTimeout
            self.linksPerConnection = linksPerConnection
            self.watchesPerConnection = watchesPerConnection
            self.requestsPerTurn = requestsPerTurn
            self.connections = connections
            self.batchSize = batchSize
            self.lineLength = lineLength
            self.unwritableTimeout = unwritableTimeout
            self.outboundHighWater = outboundHighWater
        }
    }
}

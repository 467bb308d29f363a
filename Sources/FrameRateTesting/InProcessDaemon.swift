import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import FrameRateServer
import NIOCore
import NIOEmbedded

/// A whole framerated in this process, for code outside this package (the dispatcher
/// fuzz target of Tests/Fuzz): the real control plane and tick plane of a
/// ``ServerHarness``, default limits, one `promotion-phone` display, a stepped clock.
/// Bytes go in as a client's would; what the daemon writes comes out as bytes.
///
/// Everything runs on the calling thread, synchronously: after each call, every line
/// sent has been handled and its reply written.
///
/// One daemon can serve many runs: once every connection is closed and nothing is left
/// held, ``reset()`` forgets the connections, and the next run opens new ones (indices
/// start at 0 again). What the model remembers besides (the clock, the displays' rates,
/// link and watch numbering) carries over, as it would in a daemon that stays up.
public final class InProcessDaemon {
    /// Who connects (the kernel's credentials the daemon sees).
    public enum User: CaseIterable, Sendable {
        /// uid 0.
        case root
        /// An unprivileged user.
        case user
        /// A second unprivileged user.
        case otherUser
        /// An unprivileged user in the admin group.
        case admin
    }

    /// One connection, by the order it was opened in.
    public struct Connection: Hashable, Sendable {
        /// 0 for the first connection opened, and so on.
        public let index: Int
    }

    private let harness: ServerHarness
    private var clients: [TestClient] = []
    private var owners: [OwnerID?] = []

    /// A daemon whose displays start at `CLOCK_MONOTONIC` 1000 s. Its tick plane sends with
    /// plain `send` calls: the connections are embedded (their writers are sinks, which never
    /// go through io_uring), so an io_uring ring would only cost its set-up and teardown.
    public init() {
        harness = ServerHarness(start: MonotonicClock.Instant(seconds: 1000), tickSendPath: .sendCalls)
    }

    /// Why ``reset()`` refused: something is still open or held.
    public struct ResetRefused: Error, CustomStringConvertible {
        public let description: String
    }

    /// Forgets every connection, so the next run starts from connection 0 on this daemon.
    /// - Throws: ``ResetRefused`` (and forgets nothing) unless every connection is closed and
    ///   the daemon holds no connection, link, watch or per-user count.
    public func reset() throws(ResetRefused) {
        let open = clients.indices.filter { clients[$0].channel.isActive }
        let held = [
            ("open connections", openConnectionCount), ("links", linkCount), ("watches", watchCount),
            ("users with per-user counts", accountedUserCount),
        ].filter { $0.1 != 0 }
        guard open.isEmpty, held.isEmpty else {
            let left = held.map { "\($0.1) \($0.0)" } + (open.isEmpty ? [] : ["connections \(open) not closed"])
            throw ResetRefused(description: "cannot reset: \(left.joined(separator: ", ")) left")
        }
        clients.removeAll(keepingCapacity: true)
        owners.removeAll(keepingCapacity: true)
        harness.forgetClosedChannels()
    }

    /// Opens a connection from `user`. A refused connection is opened too: it holds the
    /// refusal and is closed (``isOpen(_:)`` is false).
    public func connect(as user: User) throws -> Connection {
        let peer: PeerCredentials
        switch user {
        case .root: peer = Peers.root
        case .user: peer = Peers.user
        case .admin: peer = Peers.admin
        case .otherUser: peer = PeerCredentials(pid: 404, uid: Peers.user.uid + 1000, gid: 100, groups: [], command: "other")
        }
        let client = try harness.connect(peer)
        clients.append(client)
        owners.append(harness.core.owner(of: client.channel))
        return Connection(index: clients.count - 1)
    }

    /// Whether `connection` is still open.
    public func isOpen(_ connection: Connection) -> Bool { clients[connection.index].channel.isActive }

    /// Sends `bytes` on `connection` as one read (ignored once it is closed), then lets
    /// the daemon handle every complete line: the lines beyond one turn's budget
    /// (``ServerConfiguration/Limits/requestsPerTurn``) wait for continuations, which this runs.
    public func send(_ bytes: [UInt8], on connection: Connection) throws {
        let client = clients[connection.index]
        guard client.channel.isActive, !bytes.isEmpty else { return }
        try client.sendBytes(client.channel.allocator.buffer(bytes: bytes))
        let lines = bytes.count { $0 == UInt8(ascii: "\n") }
        let turns = lines / max(1, harness.core.configuration.limits.requestsPerTurn) + 1
        for _ in 0..<turns where client.channel.isActive {
            // Continuations are due 50 µs later; the partial-line timeout (seconds) is not reached.
            harness.loop.advanceTime(by: .microseconds(100))
        }
    }

    /// Everything the daemon wrote to `connection` since the last call.
    public func output(of connection: Connection) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let buffer = try clients[connection.index].channel.readOutbound(as: ByteBuffer.self) {
            bytes += buffer.readableBytesView
        }
        return bytes
    }

    /// Closes `connection` as a peer hang-up would.
    public func close(_ connection: Connection) {
        clients[connection.index].close()
    }

    /// Runs the tick plane at its next wake-up (a vsync at which some link ticks, a rate
    /// change or a deadline). - Returns: false when nothing is due.
    @discardableResult
    public func runNextVsync() -> Bool {
        guard harness.nextWake != nil else { return false }
        _ = try? harness.runNextVsync()
        return true
    }

    /// Lets `seconds` pass on the control loop's clock and the daemon's (timeouts fire:
    /// a partial line's, an unwritable connection's).
    public func wait(seconds: Int) {
        harness.clock.advance(by: .seconds(seconds))
        harness.loop.advanceTime(by: .seconds(Int64(seconds)))
        harness.step(to: harness.clock.now)
    }

    /// Links registered now, on every display.
    public var linkCount: Int { harness.compositor.linkCount }

    /// Links `connection` holds now (0 once it is closed).
    public func linkCount(of connection: Connection) -> Int {
        guard let owner = owners[connection.index] else { return 0 }
        return harness.compositor.links(of: owner).count
    }

    /// Connections the daemon holds open.
    public var openConnectionCount: Int { harness.core.connectionCount }

    /// Watches the daemon holds.
    public var watchCount: Int { harness.core.watchCount }

    /// Users the per-user accounting holds anything for (0 when everything was given back).
    public var accountedUserCount: Int { harness.core.accountedUserCount }

    /// Each display's refresh rate in force and its supported rates, Hz.
    /// (Read from the model and the configured profiles, without building the displays'
    /// snapshots: the fuzz target asks after every vsync.)
    public var displays: [(refreshRate: Double, supportedRates: [Double])] {
        let rates = harness.shared.read { state in
            state.compositor.displayIDs.map { id in (id, (try? state.compositor.refreshRate(of: id)) ?? .nan) }
        }
        let configured = harness.core.configuration.displays
        return rates.map { id, rate in (rate, configured.first { $0.id == id }?.profile.supportedRates ?? []) }
    }

    /// The daemon's batch limit, for an oracle that classifies lines as the daemon does.
    public var maximumBatchSize: Int { harness.core.configuration.limits.batchSize }
}

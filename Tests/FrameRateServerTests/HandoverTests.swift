import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import FrameRateServer

#if canImport(Glibc)
import Glibc
#endif

/// The restart handover's pure part: the versioned snapshot format (round trip, truncated,
/// wrong version, bad fields), and the new daemon's fallback when the snapshot is missing
/// or unusable: every handed-over connection is shut down, so its client reads end of
/// stream at once and reconnects.
@Suite("Restart handover: snapshot and fallbacks")
struct HandoverTests {
    static let displays = [DisplayConfiguration(id: DisplayID(rawValue: 0))]

    /// A snapshot of a compositor with links in several states, two sessions and binary pending input.
    static func sampleSnapshot() throws -> HandoverSnapshot {
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        var compositor = Compositor<MonotonicClock>(displays: displays, start: start)
        let owner = OwnerID(rawValue: 1 << 32 | 1)
        let other = OwnerID(rawValue: 2 << 32 | 2)
        let fast = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        _ = try compositor.register(
            owner: owner, configuration: DisplayLinkConfiguration(range: fast, hasHighFrameRateEntitlement: true, label: "scroll \"ü\""),
            at: start
        )
        _ = try compositor.register(
            owner: other, configuration: DisplayLinkConfiguration(range: try FrameRateRange(minimum: 30, maximum: 60), isPaused: true, isAdaptive: true),
            at: start
        )
        var at = start
        for _ in 0..<20 {
            at = try #require(try compositor.nextEventfulVsync(of: DisplayID(rawValue: 0)))
            _ = try compositor.vsync(of: DisplayID(rawValue: 0), at: at)
        }
        _ = try compositor.setCaps(display: nil, at: at) { $0.lowPowerMode = true }
        return HandoverSnapshot(
            start: start.nanoseconds, takenAt: at.nanoseconds, compositor: compositor.checkpoint,
            sessions: [
                HandoverSession(
                    owner: owner, inode: 12345, watches: [3, 7], pendingInput: Array("{\"jsonrpc\":\"2.0\"}\n{\"par".utf8), tickInode: 67890
                ),
                HandoverSession(owner: other, inode: UInt64.max, watches: [], pendingInput: [0, 0xFF, 10, 13, 0x80]),
            ],
            lastWatch: 7, ownerGeneration: 2
        )
    }

    @Test("a snapshot decodes to exactly what was encoded, durations to the attosecond")
    func roundTrip() throws {
        let snapshot = try Self.sampleSnapshot()
        #expect(snapshot.compositor.displays[0].links.contains { $0.pacing.nextTarget != nil })
        let decoded = try HandoverSnapshot(decoding: snapshot.encoded())
        #expect(decoded == snapshot)
        // And it restores into a compositor with the same links.
        let restored = try Compositor<MonotonicClock>(
            restoring: decoded.compositor, displays: Self.displays, start: MonotonicClock.Instant(nanoseconds: decoded.start)
        )
        #expect(restored.checkpoint == snapshot.compositor)
    }

    @Test("a truncated snapshot is unreadable, at every length")
    func truncated() throws {
        let bytes = try Self.sampleSnapshot().encoded()
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 97)) {
            #expect(throws: HandoverSnapshotError.self) { try HandoverSnapshot(decoding: Array(bytes[..<length])) }
        }
        #expect {
            try HandoverSnapshot(decoding: Array(bytes.dropLast()))
        } throws: { error in
            guard case HandoverSnapshotError.unreadable = error else { return false }
            return true
        }
    }

    @Test("another format version is refused before any other field is read")
    func wrongVersion() throws {
        var text = String(decoding: try Self.sampleSnapshot().encoded(), as: UTF8.self)
        text = text.replacing("\"format\":1,", with: "\"format\":2,")
        #expect(throws: HandoverSnapshotError.incompatibleFormat(found: 2, expected: 1)) {
            try HandoverSnapshot(decoding: Array(text.utf8))
        }
        #expect(throws: HandoverSnapshotError.incompatibleFormat(found: nil, expected: 1)) {
            try HandoverSnapshot(decoding: Array("{\"displays\":[]}".utf8))
        }
        #expect(HandoverSnapshotError.incompatibleFormat(found: 2, expected: 1).description.contains("format 2"))
    }

    @Test("a field of the wrong type or range is named by its path")
    func malformed() throws {
        let text = String(decoding: try Self.sampleSnapshot().encoded(), as: UTF8.self)
        let cases: [(String, String, String)] = [
            ("\"thermalState\":\"nominal\"", "\"thermalState\":\"lava\"", "displays[0].thermalState"),
            ("\"lastWatch\":7", "\"lastWatch\":-7", "lastWatch"),
            ("\"minimum\":80.0", "\"minimum\":0", "displays[0].links[0].minimum"),
            ("\"inode\":12345", "\"inode\":\"12345\"", "sessions[0].inode"),
        ]
        for (original, broken, field) in cases {
            #expect(text.contains(original), "the sample has no \(original)")
            #expect(throws: HandoverSnapshotError.malformed(field: field)) {
                try HandoverSnapshot(decoding: Array(text.replacing(original, with: broken).utf8))
            }
        }
    }

    // MARK: The new daemon's fallbacks

    /// Connected socket pairs: the daemon's ends (handed over) and the clients' ends.
    static func connections(_ count: Int) throws -> (daemon: [Int32], clients: [Int32]) {
        var daemon: [Int32] = []
        var clients: [Int32] = []
        for _ in 0..<count {
            let (daemonEnd, clientEnd) = try SystemCall.socketPair()
            daemon.append(daemonEnd)
            clients.append(clientEnd)
        }
        return (daemon, clients)
    }

    /// Whether the client's end reads end of stream now (the daemon shut the connection down).
    static func readsEndOfStream(_ client: Int32) -> Bool {
        var pollfd = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(client, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    static func sortHandedOver(_ adoption: ServerConfiguration.Adoption) -> FrameRateServer.TakeOver? {
        let configuration = ServerConfiguration(listener: .path("/nonexistent"), displays: displays)
        return FrameRateServer.sortHandedOver(adoption, configuration: configuration, logger: Logger(label: "test"))
    }

    @Test("connections without a snapshot (a crash restart) are shut down: their clients reconnect")
    func noSnapshot() throws {
        let (daemon, clients) = try Self.connections(3)
        defer { for client in clients { close(client) } }
        #expect(Self.sortHandedOver(.init(snapshot: nil, connections: daemon)) == nil)
        for client in clients { #expect(Self.readsEndOfStream(client)) }
    }

    @Test("a snapshot of another format, a truncated one, or one for other displays: connections shut down")
    func unusableSnapshots() throws {
        let good = try Self.sampleSnapshot().encoded()
        var otherDisplays = try Self.sampleSnapshot()
        otherDisplays.compositor.displays[0].id = DisplayID(rawValue: 5)
        let unusable: [[UInt8]] = [
            Array(String(decoding: good, as: UTF8.self).replacing("\"format\":1,", with: "\"format\":99,").utf8),
            Array(good.prefix(good.count / 2)),
            otherDisplays.encoded(),
            [],
        ]
        for bytes in unusable {
            let (daemon, clients) = try Self.connections(2)
            defer { for client in clients { close(client) } }
            let memory = try MemoryFile.create(name: "test-snapshot", contents: bytes)
            #expect(Self.sortHandedOver(.init(snapshot: memory, connections: daemon)) == nil)
            for client in clients { #expect(Self.readsEndOfStream(client)) }
        }
    }

    /// ``sampleSnapshot()`` as if taken just now (a new daemon refuses one from the future).
    static func snapshotTakenNow() throws -> HandoverSnapshot {
        var snapshot = try sampleSnapshot()
        snapshot.takenAt = MonotonicClock.now.nanoseconds
        snapshot.start = min(snapshot.start, snapshot.takenAt)
        return snapshot
    }

    @Test("a good snapshot adopts the connections it names, by inode, and shuts down the rest")
    func adoptsByInode() throws {
        let (daemon, clients) = try Self.connections(3)
        defer { for client in clients { close(client) } }
        var snapshot = try Self.snapshotTakenNow()
        // The first two sessions are the first two sockets; the third socket is nobody's.
        snapshot.sessions[0].tickInode = nil
        snapshot.sessions[0].inode = try #require(SystemCall.inode(of: daemon[1]))
        snapshot.sessions[1].inode = try #require(SystemCall.inode(of: daemon[0]))
        let memory = try MemoryFile.create(name: "test-snapshot", contents: snapshot.encoded())
        let takeOver = try #require(Self.sortHandedOver(.init(snapshot: memory, connections: daemon)))
        #expect(takeOver.adopted.map(\.0.owner) == snapshot.sessions.map(\.owner))
        #expect(takeOver.adopted.map(\.1) == [daemon[1], daemon[0]])
        #expect(Self.readsEndOfStream(clients[2]))
        #expect(!Self.readsEndOfStream(clients[0]) && !Self.readsEndOfStream(clients[1]))
        #expect(takeOver.compositor.checkpoint == snapshot.compositor)
        for (_, descriptor) in takeOver.adopted { close(descriptor) }
    }

    @Test("a connection with a tick socket is adopted with it, found by its own inode; without it, it is shut down")
    func adoptsTickSockets() throws {
        let (daemon, clients) = try Self.connections(4)
        defer { for client in clients { close(client) } }
        var snapshot = try Self.snapshotTakenNow()
        #expect(snapshot.sessions[0].tickInode != nil)
        // Session 0 and its tick socket come back (in either order); session 1 names a tick
        // socket that did not come back, so it and its connection are shut down.
        snapshot.sessions[0].inode = try #require(SystemCall.inode(of: daemon[2]))
        snapshot.sessions[0].tickInode = try #require(SystemCall.inode(of: daemon[0]))
        snapshot.sessions[1].inode = try #require(SystemCall.inode(of: daemon[1]))
        snapshot.sessions[1].tickInode = 1
        let memory = try MemoryFile.create(name: "test-snapshot", contents: snapshot.encoded())
        let takeOver = try #require(Self.sortHandedOver(.init(snapshot: memory, connections: daemon)))
        #expect(takeOver.adopted.map(\.0.owner) == [snapshot.sessions[0].owner])
        #expect(takeOver.adopted.map(\.1) == [daemon[2]])
        #expect(takeOver.adopted.map(\.0.tickDescriptor) == [daemon[0]])
        #expect(!Self.readsEndOfStream(clients[0]) && !Self.readsEndOfStream(clients[2]))
        #expect(Self.readsEndOfStream(clients[1]) && Self.readsEndOfStream(clients[3]))
        for (record, descriptor) in takeOver.adopted {
            close(descriptor)
            if let tick = record.tickDescriptor { close(tick) }
        }
    }
}

/// The new daemon's clean-up once every handed-over connection has been served.
@Suite("Restart handover: connections that could not be served")
struct HandoverUnservedTests {
    @Test("owners whose handed-over connection could not be served lose their links, and watchers hear of each; served owners keep theirs")
    func unservedOwnersLoseTheirLinks() throws {
        let server = ServerHarness()
        let watcher = try server.connect(Peers.user)
        _ = try watcher.result(.watch)
        let client = try server.connect()
        let kept = try client.register(60, 60, 60)
        let served = try #require(server.core.sessions.values.first { !server.compositor.links(of: $0.owner).isEmpty }).owner
        // As a restored compositor has them: links of an owner no session took up.
        let unserved = OwnerID(rawValue: 999 << 32 | 999)
        let range = try FrameRateRange(minimum: 30, maximum: 60, preferred: 60)
        let orphans = try (0..<2).map { _ in
            try server.shared.change { state in
                try state.compositor.register(owner: unserved, configuration: DisplayLinkConfiguration(range: range), at: server.clock.now).link
            }
        }
        _ = try watcher.lines()
        let released = server.core.releaseUnserved([served, unserved])
        #expect(Set(released) == Set(orphans))
        #expect(server.compositor.links(of: unserved).isEmpty)
        #expect(server.compositor.links(of: served).map(\.link.rawValue) == [kept])
        let removed = try watcher.lines().map { try notificationParams($0, .event) }.filter { $0["kind"] == "linkRemoved" }
        #expect(Set(removed.compactMap { $0["link"] }) == Set(orphans.map { JSONValue($0.rawValue) }))
        // Nothing left to release: a second call changes nothing.
        #expect(server.core.releaseUnserved([served, unserved]).isEmpty)
    }
}

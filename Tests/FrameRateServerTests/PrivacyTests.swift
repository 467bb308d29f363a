#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import Testing

@testable import FrameRateServer

/// Two unprivileged users, root and an admin on one daemon: who sees whose pid, uid,
/// command and label (docs/security.md, "What each user sees").
@Suite("Private by default")
struct PrivacyTests {
    /// A second unprivileged user, distinct from ``Peers/user``.
    static let other: PeerCredentials = {
        let uid: UInt32 = geteuid() == 54340 ? 54341 : 54340
        return PeerCredentials(pid: 404, uid: uid, gid: uid, groups: [100], command: "other-app")
    }()

    /// `user` holds link 1 ('mine', 30-60), `other` holds link 2 ('theirs', entitled 80-120, the decider).
    static func twoUsers() throws -> (ServerHarness, user: TestClient, other: TestClient) {
        let server = ServerHarness(start: MonotonicClock.Instant(seconds: 1000))
        let user = try server.connect(Peers.user)
        let other = try server.connect(Self.other)
        _ = try user.register(30, 60, 60, extra: #","label":"mine""#)
        _ = try other.register(80, 120, 120, extra: #","label":"theirs","highFrameRate":true"#)
        return (server, user, other)
    }

    static func links(_ state: JSONValue) -> [JSONValue] {
        state["displays"]?[0]?["links"]?.arrayValue ?? []
    }

    @Test("GetState: a user sees its own links' holder and label, others' as null")
    func getStateRedactsOthers() throws {
        let (_, user, other) = try Self.twoUsers()
        let seen = Self.links(try user.result(.getState))
        try #require(seen.count == 2)
        #expect(seen[0]["pid"] == 202 && seen[0]["uid"] == .number(JSONNumber(Int(Peers.user.uid))))
        #expect(seen[0]["command"] == "app" && seen[0]["label"] == "mine")
        for field in ["pid", "uid", "command", "label"] { #expect(seen[1][field] == .null, "\(field)") }
        // What is not identity stays: id, range, rates, the entitlement, the limit.
        #expect(seen[1]["link"] == 2 && seen[1]["range"]?["maximum"] == 120.0 && seen[1]["highFrameRate"] == true)
        #expect(seen[1]["callbackRate"] == 60.0)  // at the rate in force until the next vsync
        let theirs = Self.links(try other.result(.getState))
        #expect(theirs[0]["pid"] == .null && theirs[0]["label"] == .null)
        #expect(theirs[1]["pid"] == 404 && theirs[1]["label"] == "theirs")
        // The parsed form: no holder.
        #expect(try LinkState(json: seen[1]).peer == nil)
        #expect(try LinkState(json: seen[0]).peer == PeerIdentity(pid: 202, uid: Peers.user.uid, command: "app"))
    }

    @Test("root and the admin group see every holder and label")
    func privilegedSeeAll() throws {
        let (server, _, _) = try Self.twoUsers()
        for peer in [Peers.root, Peers.admin] {
            let links = Self.links(try server.connect(peer).result(.getState))
            #expect(links.map { $0["pid"] } == [202, 404], "\(peer.uid)")
            #expect(links.map { $0["label"] } == ["mine", "theirs"], "\(peer.uid)")
        }
    }

    @Test("decision reasons name another user's link without its label, in GetState and Register replies")
    func reasonsRedactLabels() throws {
        let (server, user, other) = try Self.twoUsers()
        let display = try user.result(.getState)["displays"]?[0]
        let reason = try #require(display?["reason"]?.stringValue)
        let decisionReason = try #require(display?["decision"]?["reason"]?.stringValue)
        #expect(reason.contains("link 2 (80, 120, 120) holds it there"), "\(reason)")
        #expect(!reason.contains("theirs") && !decisionReason.contains("theirs"))
        #expect(decisionReason.contains("link 2 (80, 120, 120)"))
        // The holder reads its own label; root reads it too.
        let own = try #require(try other.result(.getState)["displays"]?[0]?["reason"]?.stringValue)
        #expect(own.contains("link 2 'theirs' (80, 120, 120) holds it there"))
        let root = try #require(try server.connect(Peers.root).result(.getState)["displays"]?[0]?["reason"]?.stringValue)
        #expect(root.contains("'theirs'"))
        // A Register reply's decision is the caller's view: another user's decider has no label.
        let reply = try user.result(.register, #"{"range":{"minimum":30,"maximum":60,"preferred":60},"label":"second"}"#)
        let replyReason = try #require(reply["decision"]?["reason"]?.stringValue)
        #expect(replyReason.contains("link 2 (80, 120, 120) holds it there") && !replyReason.contains("theirs"), "\(replyReason)")
    }

    @Test("Watch: the initial state and every event are redacted per watcher")
    func watchRedactsPerWatcher() throws {
        let server = ServerHarness(start: MonotonicClock.Instant(seconds: 1000))
        let user = try server.connect(Peers.user)
        let root = try server.connect(Peers.root)
        let userWatch = try user.result(.watch)
        let rootWatch = try root.result(.watch)
        let userState = try #require(userWatch["state"])
        let rootState = try #require(rootWatch["state"])
        #expect(Self.links(userState).isEmpty && Self.links(rootState).isEmpty)

        let other = try server.connect(Self.other)
        _ = try other.register(80, 120, 120, extra: #","label":"theirs","highFrameRate":true"#)
        let userAdded = try notificationParams(try #require(try user.lines().first), .event)
        let rootAdded = try notificationParams(try #require(try root.lines().first), .event)
        #expect(userAdded["kind"] == "linkAdded" && rootAdded["kind"] == "linkAdded")
        #expect(userAdded["link"]?["pid"] == .null && userAdded["link"]?["label"] == .null && userAdded["link"]?["command"] == .null)
        #expect(rootAdded["link"]?["pid"] == 404 && rootAdded["link"]?["label"] == "theirs")

        // The rate change the link causes: its reason without the label for the user.
        try server.runNextVsync()
        let userChange = try user.nonTickLines().map { try notificationParams($0, .event) }.first { $0["kind"] == "refreshRateChanged" }
        let rootChange = try root.nonTickLines().map { try notificationParams($0, .event) }.first { $0["kind"] == "refreshRateChanged" }
        let userReason = try #require(userChange?["reason"]?.stringValue)
        #expect(userReason.contains("link 1 (80, 120, 120)") && !userReason.contains("theirs"), "\(userReason)")
        #expect(userChange?["decision"]?["reason"]?.stringValue == userReason)
        #expect(try #require(rootChange?["reason"]?.stringValue).contains("link 1 'theirs' (80, 120, 120)"))

        // The holder's own watch sees its own link in full.
        let ownWatch = try other.result(.watch)
        #expect(Self.links(try #require(ownWatch["state"]))[0]["label"] == "theirs")
    }

    @Test("GetState is encoded once per generation and viewer scope: root and the admin share one")
    func encodedOncePerScope() throws {
        let (server, user, other) = try Self.twoUsers()
        let root = try server.connect(Peers.root)
        let admin = try server.connect(Peers.admin)
        let first = try root.request(.getState)
        #expect(server.core.stateCache.count == 1)
        #expect(try admin.request(.getState) == first)
        #expect(server.core.stateCache.count == 1)
        let userView = try user.request(.getState)
        let otherView = try other.request(.getState)
        #expect(userView != first && otherView != first && userView != otherView)
        #expect(server.core.stateCache.count == 3)
        // Again, between two changes: the same bytes, nothing more kept.
        #expect(try user.request(.getState) == userView)
        #expect(server.core.stateCache.count == 3)
        // A change: the old encodings go.
        _ = try user.register(30, 60, 60)
        _ = try root.request(.getState)
        #expect(server.core.stateCache.count == 1)
    }

    @Test("a holder whose uid is the unknown one is never matched by another unknown viewer")
    func unknownPeersSeeNothing() throws {
        let server = ServerHarness()
        let first = try server.connect(PeerCredentials.unknown)
        _ = try first.register(30, 60, 60, extra: #","label":"x""#)
        let second = try server.connect(PeerCredentials.unknown)
        let links = Self.links(try second.result(.getState))
        #expect(links.count == 1 && links[0]["label"] == .null && links[0]["uid"] == .null)
    }
}

/// The one place that decides what a viewer sees of a link's holder.
@Suite("Viewer")
struct ViewerTests {
    static let alice = PeerCredentials(pid: 10, uid: 1000, gid: 1000, groups: [], command: "a")
    static let bob = PeerCredentials(pid: 11, uid: 1001, gid: 1001, groups: [], command: "b")

    @Test func scopes() {
        #expect(Viewer(peer: Self.alice, isPrivileged: true).scope == .everyone)
        #expect(Viewer(peer: Self.alice, isPrivileged: false).scope == .ownUID(1000))
        #expect(Viewer(peer: .unknown, isPrivileged: false).scope == .nobody)
    }

    @Test func mayIdentify() {
        let alice = Viewer(peer: Self.alice, isPrivileged: false)
        #expect(alice.mayIdentify(Self.alice))
        // Another process of the same user: the same uid.
        #expect(alice.mayIdentify(PeerCredentials(pid: 99, uid: 1000, gid: 5, groups: [], command: "other")))
        #expect(!alice.mayIdentify(Self.bob))
        #expect(!alice.mayIdentify(nil))
        #expect(!alice.mayIdentify(.unknown))
        let everyone = Viewer(scope: .everyone)
        #expect(everyone.mayIdentify(Self.bob) && everyone.mayIdentify(nil) && everyone.mayIdentify(.unknown))
        let nobody = Viewer(scope: .nobody)
        #expect(!nobody.mayIdentify(Self.alice) && !nobody.mayIdentify(.unknown))
    }

    @Test func identity() {
        let alice = Viewer(peer: Self.alice, isPrivileged: false)
        #expect(alice.identity(of: Self.alice) == PeerIdentity(pid: 10, uid: 1000, command: "a"))
        #expect(alice.identity(of: Self.bob) == nil)
        #expect(Viewer(scope: .everyone).identity(of: nil) == PeerCredentials.unknown.identity)
    }
}

/// The bound on encoded GetState results, and how long one is reused.
@Suite("EncodedStateCache")
struct EncodedStateCacheTests {
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
    static let t0 = Duration.seconds(5)

    @Test func keepsPerScopeForOneEdition() {
        var cache = EncodedStateCache<UInt64>(capacity: 4)
        cache.store(Self.bytes("all"), for: .everyone, edition: 7, at: Self.t0)
        cache.store(Self.bytes("u1"), for: .ownUID(1), edition: 7, at: Self.t0)
        #expect(cache.bytes(for: .everyone, edition: 7, at: Self.t0) == Self.bytes("all"))
        #expect(cache.bytes(for: .ownUID(1), edition: 7, at: Self.t0) == Self.bytes("u1"))
        #expect(cache.bytes(for: .ownUID(2), edition: 7, at: Self.t0) == nil)
        #expect(cache.bytes(for: .everyone, edition: 8, at: Self.t0) == nil)
        cache.store(Self.bytes("all8"), for: .everyone, edition: 8, at: Self.t0)
        #expect(cache.count == 1)
        #expect(cache.bytes(for: .ownUID(1), edition: 8, at: Self.t0) == nil)
    }

    @Test("an encoding is reused for its lifetime after it was stored, however long ago it was asked for")
    func lifetimeCountsFromTheStore() {
        var cache = EncodedStateCache<UInt64>(capacity: 4, lifetime: .milliseconds(100))
        // Asked at t0, finished 250 ms later (an encoding slower than the lifetime).
        cache.store(Self.bytes("all"), for: .everyone, edition: 1, at: Self.t0 + .milliseconds(250))
        #expect(cache.bytes(for: .everyone, edition: 1, at: Self.t0 + .milliseconds(250)) == Self.bytes("all"))
        #expect(cache.bytes(for: .everyone, edition: 1, at: Self.t0 + .milliseconds(349)) == Self.bytes("all"))
        #expect(cache.bytes(for: .everyone, edition: 1, at: Self.t0 + .milliseconds(350)) == nil)
    }

    @Test func neverHoldsMoreThanItsCapacity() {
        var cache = EncodedStateCache<UInt64>(capacity: 3)
        for uid in UInt32(0)..<100 {
            cache.store(Self.bytes("u\(uid)"), for: .ownUID(uid), edition: 1, at: Self.t0)
            #expect(cache.count <= 3)
            #expect(cache.bytes(for: .ownUID(uid), edition: 1, at: Self.t0) == Self.bytes("u\(uid)"))
        }
        #expect(cache.count == 3)
    }

    @Test("when full, an expired entry makes room before a live one")
    func expiredEntriesGoFirst() {
        var cache = EncodedStateCache<UInt64>(capacity: 2, lifetime: .milliseconds(100))
        cache.store(Self.bytes("old"), for: .ownUID(1), edition: 1, at: Self.t0)
        cache.store(Self.bytes("live"), for: .ownUID(2), edition: 1, at: Self.t0 + .milliseconds(90))
        cache.store(Self.bytes("new"), for: .ownUID(3), edition: 1, at: Self.t0 + .milliseconds(150))
        #expect(cache.count == 2)
        #expect(cache.bytes(for: .ownUID(2), edition: 1, at: Self.t0 + .milliseconds(150)) == Self.bytes("live"))
        #expect(cache.bytes(for: .ownUID(3), edition: 1, at: Self.t0 + .milliseconds(150)) == Self.bytes("new"))
    }
}

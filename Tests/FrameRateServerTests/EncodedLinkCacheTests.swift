import FrameRateModel
import FrameRateProtocol
import FrameRateTesting
import NIOCore
import Testing

@testable import FrameRateServer

/// Re-encoding the state serializes only the links that changed, and writes exactly the
/// bytes of a whole encoding, for viewers who see the holders and viewers who do not.
@Suite struct EncodedLinkCacheTests {
    /// Encodes the state `viewer` sees through `cache` and checks it against a whole encoding.
    static func encode(_ server: ServerHarness, for viewer: Viewer, with cache: inout EncodedLinkCache) {
        let state = server.core.currentState(for: viewer)
        var spliced = ByteBuffer()
        cache.encode(state, into: &spliced)
        var whole = ByteBuffer()
        whole.writeJSONValue(state.jsonValue)
        #expect(String(buffer: spliced) == String(buffer: whole))
    }

    @Test func onlyChangedLinksAreSerializedAgain() throws {
        let server = ServerHarness()
        let root = try server.connect(Peers.root)
        let user = try server.connect(Peers.user)
        var links: [UInt64] = []
        for index in 0..<10 {
            let client = index.isMultiple(of: 2) ? root : user
            links.append(try client.register(30, 60, 60, extra: #","label":"link \#(index)""#))
        }
        let everyone = Viewer(peer: Peers.root, isPrivileged: true)
        let oneUser = Viewer(peer: Peers.user, isPrivileged: false)
        var cache = EncodedLinkCache()

        Self.encode(server, for: everyone, with: &cache)
        #expect((cache.serialized, cache.reused) == (10, 0))
        // The user sees its own five links as root does, and root's five without holder or label.
        Self.encode(server, for: oneUser, with: &cache)
        #expect((cache.serialized, cache.reused) == (15, 5))
        // Both views are kept: asking in turn serializes nothing.
        Self.encode(server, for: everyone, with: &cache)
        Self.encode(server, for: oneUser, with: &cache)
        #expect((cache.serialized, cache.reused) == (15, 25))

        // One link changes: only it is serialized again.
        _ = try root.result(.update, #"{"link":\#(links[0]),"range":{"minimum":80,"maximum":120,"preferred":120}}"#)
        _ = try root.nonTickLines()
        Self.encode(server, for: everyone, with: &cache)
        #expect(cache.serialized == 16)
        #expect(cache.count == 10)

        // Ended links are dropped after the next encoding.
        _ = try user.result(.invalidate, #"{"link":\#(links[1])}"#)
        _ = try user.result(.invalidate, #"{"link":\#(links[3])}"#)
        Self.encode(server, for: everyone, with: &cache)
        #expect(cache.count == 8)
    }
}

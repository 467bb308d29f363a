#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRatePosix
import Testing

/// `PeerCredentials` over a real socket pair: the kernel's uid, gid, pid and
/// supplementary groups (`SO_PEERGROUPS`) of the process at the other end, here this one.
@Suite struct PeerCredentialsTests {
    @Test func aPeerIsWhoTheKernelSaysWithItsSupplementaryGroups() throws {
        let (one, other) = try SystemCall.socketPair()
        defer {
            SystemCall.close(one)
            SystemCall.close(other)
        }
        let peer = PeerCredentials.ofPeer(of: one)
        #expect(peer.pid == getpid())
        #expect(peer.uid == getuid())
        #expect(peer.gid == getgid())
        let count = getgroups(0, nil)
        var expected = [gid_t](repeating: 0, count: Int(max(count, 0)))
        _ = getgroups(count, &expected)
        #expect(Set(peer.groups) == Set(expected))
        // The kernel keeps the first 15 bytes of the executable's name (TASK_COMM_LEN - 1).
        #expect(peer.command == String(CommandLine.arguments[0].split(separator: "/").last!.utf8.prefix(15)))
    }

    @Test func aDescriptorThatIsNoSocketHasUnknownCredentials() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(PeerCredentials.ofPeer(of: fds[0]) == .unknown)
    }
}

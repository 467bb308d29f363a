#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
package import FrameRatePosix

/// The admin group's id the harness pretends the daemon resolved (the group need not exist).
package let testAdminGroupID: UInt32 = 4242

/// Peers as the kernel would report them.
package enum Peers {
    package static let root = PeerCredentials(pid: 101, uid: 0, gid: 0, groups: [], command: "rootd")
    /// A uid that is neither root nor the user running the tests (the daemon's user).
    package static let user: PeerCredentials = {
        let uid: UInt32 = geteuid() == 54321 ? 54322 : 54321
        return PeerCredentials(pid: 202, uid: uid, gid: uid, groups: [100], command: "app")
    }()
    /// An unprivileged uid whose supplementary groups include the admin group.
    package static let admin: PeerCredentials = {
        let uid: UInt32 = geteuid() == 54330 ? 54331 : 54330
        return PeerCredentials(pid: 303, uid: uid, gid: uid, groups: [100, testAdminGroupID], command: "settings")
    }()
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's word on who is at the other end of a connected Unix socket:
/// its `struct ucred` (`SO_PEERCRED`), declared here because Glibc only exposes
/// it under `_GNU_SOURCE`. Same layout: pid, uid, gid. Used by the daemon (who
/// is this client?) and by the client (who is this daemon?).
///
/// For a connecting socket the kernel records the listener's credentials as of
/// its `listen()`; for an accepted socket, the connecting process's as of its
/// `connect()`. Neither side can forge them.
public struct KernelPeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The `getsockopt` level of the option, `SOL_SOCKET`.
    public static let optionLevel = Int32(SOL_SOCKET)
    /// The `getsockopt` name of the option, `SO_PEERCRED`.
    public static let optionName = Int32(SO_PEERCRED)

    /// The credentials of the peer of the connected Unix socket `descriptor`,
    /// or `nil` when they cannot be read (not a Unix socket, not connected).
    public static func read(descriptor: Int32) -> KernelPeerCredentials? {
        var credentials = KernelPeerCredentials()
        var length = socklen_t(MemoryLayout<KernelPeerCredentials>.size)
        guard getsockopt(descriptor, optionLevel, optionName, &credentials, &length) == 0,
            Int(length) == MemoryLayout<KernelPeerCredentials>.size
        else { return nil }
        return credentials
    }
}

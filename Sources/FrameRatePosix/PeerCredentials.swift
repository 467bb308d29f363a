#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import FrameRateProtocol

/// The kernel's word on who is at the other end of a Unix socket
/// (`SO_PEERCRED`), plus the peer's supplementary groups (`SO_PEERGROUPS`) and
/// command name (`/proc/PID/comm`). Never taken from anything the client sends.
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups as the kernel recorded them when the peer connected
    /// (`SO_PEERGROUPS`; `/proc/PID/status` `Groups:` on kernels before 4.13).
    public var groups: [UInt32]
    /// `/proc/PID/comm`, if readable.
    public var command: String?

    public var identity: PeerIdentity { PeerIdentity(pid: pid, uid: uid, command: command) }

    /// Credentials for a connection whose `struct ucred` the kernel reported.
    /// - Parameter groups: the peer's supplementary groups; `nil` reads them from `/proc/PID/status`.
    public init(ucred credentials: KernelPeerCredentials, groups: [UInt32]? = nil) {
        self.pid = credentials.pid
        self.uid = credentials.uid
        self.gid = credentials.gid
        self.groups = groups ?? Self.supplementaryGroups(of: credentials.pid)
        self.command = Self.command(of: credentials.pid)
    }

    /// Unknown peer (credentials could not be read): no privileges.
    public static let unknown = PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max, groups: [], command: nil)

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32], command: String?) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
        self.command = command
    }

    /// Whether the peer is in group `gid` (primary or supplementary).
    public func isMember(of gid: UInt32) -> Bool { self.gid == gid || groups.contains(gid) }

    private static func command(of pid: Int32) -> String? {
        // A task's comm is at most 16 bytes (TASK_COMM_LEN) plus its newline.
        guard pid > 0, let text = readSmallFile("/proc/\(pid)/comm", limit: 64) else { return nil }
        return text.split(separator: "\n").first.map(String.init)
    }

    /// The supplementary groups from `/proc/PID/status` (its `Groups:` line): only where
    /// the kernel lacks `SO_PEERGROUPS`, since the pid may name another process by now.
    private static func supplementaryGroups(of pid: Int32) -> [UInt32] {
        guard pid > 0, let status = readSmallFile("/proc/\(pid)/status", limit: 16384) else { return [] }
        for line in status.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        return []
    }

    /// The supplementary groups the kernel recorded for the peer of connected Unix socket
    /// `fd` when it connected (`SO_PEERGROUPS`, Linux 4.13), or `nil` where the option is
    /// unknown or unreadable.
    static func peerGroups(of fd: Int32) -> [UInt32]? {
        // NGROUPS_MAX is 65,536; most peers have a handful, so try a small buffer first.
        var capacity = 32
        while capacity <= 65_536 {
            var groups = [gid_t](repeating: 0, count: capacity)
            var length = socklen_t(capacity * MemoryLayout<gid_t>.size)
            let status = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
            if status == 0 {
                return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size))
            }
            // ERANGE: `length` now holds the size needed.
            guard errno == ERANGE else { return nil }
            capacity = Swift.max(capacity * 2, Int(length) / MemoryLayout<gid_t>.size)
        }
        return nil
    }

    /// The kernel's credentials for the peer of connected socket `fd` (`SO_PEERCRED`,
    /// `SO_PEERGROUPS`), with its command from `/proc`; ``unknown`` when unreadable.
    public static func ofPeer(of fd: Int32) -> PeerCredentials {
        guard let credentials = KernelPeerCredentials.read(descriptor: fd) else { return .unknown }
        return PeerCredentials(ucred: credentials, groups: peerGroups(of: fd))
    }

    /// Reads up to `limit` bytes of a small file such as `/proc/PID/comm`.
    static func readSmallFile(_ path: String, limit: Int) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return String(unsafeUninitializedCapacity: limit) { buffer in
            var total = 0
            while total < buffer.count {
                let count = read(fd, buffer.baseAddress! + total, buffer.count - total)
                if count <= 0 { break }
                total += count
            }
            return total
        }
    }
}

/// Resolves group names to ids (`getgrnam_r`).
public enum GroupDirectory {
    /// The id of group `name`, if it exists.
    public static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return group.gr_gid
    }
}

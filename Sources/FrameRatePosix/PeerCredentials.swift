#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import FrameRateProtocol

/// The kernel's word on who is at the other end of a Unix socket
/// (`SO_PEERCRED`), plus the peer's supplementary groups and command name
/// from `/proc/PID`. Never taken from anything the client sends.
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups (`/proc/PID/status` `Groups:`), read at connection time.
    public var groups: [UInt32]
    /// `/proc/PID/comm`, if readable.
    public var command: String?

    public var identity: PeerIdentity { PeerIdentity(pid: pid, uid: uid, command: command) }

    /// Credentials for a connection whose `struct ucred` the kernel reported.
    public init(ucred credentials: KernelPeerCredentials) {
        self.pid = credentials.pid
        self.uid = credentials.uid
        self.gid = credentials.gid
        self.groups = Self.supplementaryGroups(of: credentials.pid)
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
        guard pid > 0, let text = readSmallFile("/proc/\(pid)/comm") else { return nil }
        return text.split(separator: "\n").first.map(String.init)
    }

    private static func supplementaryGroups(of pid: Int32) -> [UInt32] {
        guard pid > 0, let status = readSmallFile("/proc/\(pid)/status") else { return [] }
        for line in status.split(separator: "\n") where line.hasPrefix("Groups:") {
            return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        }
        return []
    }

    /// The kernel's credentials for the peer of connected socket `fd` (`SO_PEERCRED`),
    /// with its groups and command from `/proc`; ``unknown`` when unreadable.
    public static func ofPeer(of fd: Int32) -> PeerCredentials {
        guard let credentials = KernelPeerCredentials.read(descriptor: fd) else { return .unknown }
        return PeerCredentials(ucred: credentials)
    }

    /// Reads up to 64 KiB of a small file such as `/proc/PID/comm`.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if count <= 0 { break }
            total += count
        }
        return String(decoding: bytes[..<total], as: UTF8.self)
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

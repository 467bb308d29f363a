#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateProtocol

/// The kernel's word on who is at the other end of a Unix socket
/// (`SO_PEERCRED`), plus the peer's supplementary groups and command name
/// from `/proc/PID`. Never taken from anything the client sends.
struct PeerCredentials: Sendable, Hashable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
    /// Supplementary groups (`/proc/PID/status` `Groups:`), read at connection time.
    var groups: [UInt32]
    /// `/proc/PID/comm`, if readable.
    var command: String?

    var identity: PeerIdentity { PeerIdentity(pid: pid, uid: uid, command: command) }

    /// Credentials for a connection whose `struct ucred` the kernel reported.
    init(ucred credentials: KernelPeerCredentials) {
        self.pid = credentials.pid
        self.uid = credentials.uid
        self.gid = credentials.gid
        self.groups = Self.supplementaryGroups(of: credentials.pid)
        self.command = Self.command(of: credentials.pid)
    }

    /// Unknown peer (credentials could not be read): no privileges.
    static let unknown = PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max, groups: [], command: nil)

    init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32], command: String?) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
        self.command = command
    }

    /// Whether the peer is in group `gid` (primary or supplementary).
    func isMember(of gid: UInt32) -> Bool { self.gid == gid || groups.contains(gid) }

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
enum GroupDirectory {
    static func groupID(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return group.gr_gid
    }
}

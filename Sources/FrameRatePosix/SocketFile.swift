#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateProtocol

/// The socket file on disk: checks for a live daemon before binding, removes
/// a stale file left by a dead one, sets the mode after binding.
public enum SocketFile {
    /// Why the daemon cannot bind its path.
    public struct InUse: Error, CustomStringConvertible {
        public let path: String
        public var description: String {
            "another framerated is already answering on \(path); stop it first "
                + "(systemctl stop framerated, or kill the process holding the socket), or pass --socket with another path"
        }
    }

    /// Why a socket path is unusable.
    public struct Unusable: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "cannot use socket path \(path): \(reason)" }
    }

    /// Makes `path` free to bind: fails when a daemon answers there; removes a stale
    /// socket file; refuses to remove anything that is not a socket. Creates a missing
    /// parent directory (mode 0755).
    public static func prepare(_ path: String) throws {
        guard path.utf8.count <= UnixSocketAddress.maximumPathLength else {
            throw Unusable(path: path, reason: "longer than the \(UnixSocketAddress.maximumPathLength)-byte limit of a Unix socket path")
        }
        try createParentDirectory(of: path)
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw Unusable(path: path, reason: "a file that is not a socket is in the way; remove it or choose another path")
        }
        if answers(path) { throw InUse(path: path) }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw Unusable(path: path, reason: "cannot remove the stale socket: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether something accepts connections on `path` right now.
    public static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixSocketAddress.withAddress(of: path) { connect(fd, $0, $1) } == 0
    }

    /// `chmod` after binding.
    public static func setMode(_ path: String, mode: UInt32) throws {
        guard chmod(path, mode_t(mode)) == 0 else {
            throw Unusable(path: path, reason: "chmod failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the socket file if it is still a socket.
    public static func remove(_ path: String) {
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
    }

    private static func createParentDirectory(of path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let parent = String(path[..<slash])
        var info = stat()
        if stat(parent, &info) == 0 { return }
        try createParentDirectory(of: parent)
        guard mkdir(parent, 0o755) == 0 || errno == EEXIST else {
            throw Unusable(path: path, reason: "cannot create directory \(parent): \(String(cString: strerror(errno)))")
        }
    }
}

import FrameRateProtocol
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns a failed connect into the ``FrameRateClientError`` that tells a person what to do.
enum ConnectFailure {
    /// What is at a socket path, as far as explaining a failed connect goes.
    enum PathKind: Hashable, Sendable {
        /// Nothing (or it cannot be examined).
        case missing
        /// A socket: a daemon's, live or stale.
        case socket
        /// Something else, e.g. `a regular file` or `a directory`.
        case other(String)
    }

    /// The error for `error`, raised while connecting to `target` (or while
    /// checking who answered there, ``DaemonTrust/Refusal``).
    static func map(_ error: any Error, target: SocketDiscovery) -> FrameRateClientError {
        let path = target.path
        switch error {
        case let error as IOError:
            return map(errno: error.errnoCode, target: target, kind: pathKind(path))
        case let error as SocketAddressError:
            if case .unixDomainSocketPathTooLong = error {
                return .connectionFailed(path: path, reason: "the path is too long for a Unix socket (at most 107 bytes)")
            }
        case let refusal as DaemonTrust.Refusal:
            switch refusal {
            case .untrusted(let uid): return .untrustedDaemon(path: path, uid: uid)
            case .credentialsUnreadable(let why):
                return .connectionFailed(path: path, reason: "cannot tell who is listening (SO_PEERCRED: \(why)), so it is not trusted")
            }
        default:
            break
        }
        return .connectionFailed(path: path, reason: "\(error)")
    }

    /// The error for a connect to `target` that failed with `errno`; `kind` is what
    /// is at the path (only examined for `ECONNREFUSED`, which Linux also returns
    /// for a path that exists but is not a socket).
    static func map(errno: Int32, target: SocketDiscovery, kind: @autoclosure () -> PathKind) -> FrameRateClientError {
        let path = target.path
        switch errno {
        case ECONNREFUSED:
            if case .other(let what) = kind() {
                return .connectionFailed(path: path, reason: "the path exists but is \(what), not a socket")
            }
            return .daemonNotRunning(target)
        case ENOENT:
            return .daemonNotRunning(target)
        case EACCES, EPERM:
            return .permissionDenied(path: path)
        case ENOTSOCK:
            return .connectionFailed(path: path, reason: "the path exists but is not a socket")
        default:
            return .connectionFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// What is at `path` (following symbolic links, as `connect` does).
    static func pathKind(_ path: String) -> PathKind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return .socket
        case S_IFREG: return .other("a regular file")
        case S_IFDIR: return .other("a directory")
        case S_IFIFO: return .other("a FIFO")
        case S_IFLNK: return .other("a symbolic link")
        case S_IFCHR, S_IFBLK: return .other("a device")
        default: return .other("a special file")
        }
    }
}

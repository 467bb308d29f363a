import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns a failed connect into the ``FrameRateClientError`` that tells a person what to do.
enum ConnectFailure {
    /// The error for `error`, raised while connecting to `path`.
    static func map(_ error: any Error, path: String) -> FrameRateClientError {
        if let error = error as? IOError {
            switch error.errnoCode {
            case ENOENT, ECONNREFUSED: return .daemonNotRunning(path: path)
            case EACCES, EPERM: return .permissionDenied(path: path)
            case ENOTSOCK: return .connectionFailed(path: path, reason: "the path exists but is not a socket")
            default: return .connectionFailed(path: path, reason: String(cString: strerror(error.errnoCode)))
            }
        }
        if let error = error as? SocketAddressError, case .unixDomainSocketPathTooLong = error {
            return .connectionFailed(path: path, reason: "the path is too long for a Unix socket (at most 107 bytes)")
        }
        return .connectionFailed(path: path, reason: "\(error)")
    }
}

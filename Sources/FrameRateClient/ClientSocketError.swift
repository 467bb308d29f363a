#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why an operation of the low-level session layer (``ClientSocket``, ``LineBuffer``,
/// ``LineSession``) failed after the connection was made. Connecting itself fails with
/// the same ``FrameRateClientError`` as ``FrameRateConnection/connect(socketPath:eventLoopGroup:reconnect:)``.
public enum ClientSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed: its name and `errno`.
    case system(call: String, errno: Int32)
    /// The peer closed the stream (a `read` returned 0) before what was waited for arrived.
    case closed
    /// The deadline passed before what was waited for arrived.
    case timedOut
    /// An unterminated line grew beyond `limit` bytes (``LineBuffer/maximumLineLength``).
    case lineTooLong(limit: Int)
    /// The daemon sent a line the request helper cannot accept (not JSON-RPC, a batch, or a
    /// response to an id this session never sent).
    case protocolViolation(String)
    /// The socket was already closed by ``ClientSocket/close()``.
    case notOpen

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .system(let call, let errno): "\(call) failed: \(String(cString: strerror(errno)))"
        case .closed: "the daemon closed the connection"
        case .timedOut: "no answer before the deadline"
        case .lineTooLong(let limit): "the daemon sent a line longer than \(limit) bytes"
        case .protocolViolation(let detail): "the daemon sent a message this client cannot read: \(detail)"
        case .notOpen: "the socket is closed"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateProtocol
import Logging
import NIOCore
import NIOPosix

/// Accepts connections on the listening Unix socket itself and hands each one to NIO
/// (`ClientBootstrap.withConnectedSocket`) on the compositor's event loop.
///
/// Why not NIO's `ServerBootstrap`: a channel NIO accepts hides its file descriptor, and
/// the tick fan-out sends on each connection's descriptor directly (see
/// ``Session/flushTicks()``): NIO's outbound path per write cost about as much CPU as the
/// `send` itself (docs/performance.md). Accepting here keeps the descriptor; everything
/// else (reads, replies, writability, close) stays with NIO.
///
/// The accept loop runs on its own thread (a one-thread `NIOThreadPool`): `poll` on the
/// listener and a wake-up pipe, `accept` until `EAGAIN`, peer credentials from
/// `SO_PEERCRED` and `/proc`, then the adoption is scheduled on the event loop.
final class Acceptor: Sendable {
    /// The listening socket (bound here or inherited from systemd); closed when the loop ends.
    private let listener: Int32
    /// Written to by ``stop()`` to end ``run(adopt:)``.
    private let wake: (read: Int32, write: Int32)
    private let logger: Logger

    /// - Parameter listener: a listening stream socket; the acceptor takes ownership.
    init(listener: Int32, logger: Logger) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw IOError(errnoCode: errno, reason: "pipe") }
        for fd in fds + [listener] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        self.listener = listener
        self.wake = (fds[0], fds[1])
        self.logger = logger
    }

    /// Binds and listens on a Unix socket at `path` (the file must not exist).
    /// - Returns: the listening descriptor.
    static func listen(path: String, backlog: Int32) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        guard let bound = UnixSocketAddress.withAddress(of: path, { bind(fd, $0, $1) }) else {
            close(fd)
            throw IOError(errnoCode: ENAMETOOLONG, reason: "socket path \(path)")
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let error = IOError(errnoCode: errno, reason: "bind/listen on \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Accepts until ``stop()``; calls `adopt` with each new connection's descriptor and
    /// its peer's credentials (on this thread). Closes the listener and the pipe at the end.
    func run(adopt: (Int32, PeerCredentials) -> Void) {
        defer {
            close(listener)
            close(wake.read)
            close(wake.write)
        }
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.critical("accept loop: poll failed: \(String(cString: strerror(errno)))")
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            while true {
                // accept4 is not in Glibc's Swift overlay; the daemon never forks or execs,
                // so setting close-on-exec just after accept leaves no window that matters.
                let fd = accept(listener, nil, nil)
                if fd >= 0 {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    adopt(fd, Self.peerCredentials(of: fd))
                    continue
                }
                switch errno {
                case EAGAIN, EWOULDBLOCK: break
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: back off instead of spinning on a pending connection.
                    logger.error("cannot accept a connection: \(String(cString: strerror(errno))); retrying in 10 ms")
                    usleep(10_000)
                default:
                    logger.error("accept failed: \(String(cString: strerror(errno)))")
                }
                break
            }
        }
    }

    /// Ends ``run(adopt:)`` (from any thread).
    func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// The kernel's credentials for the peer of `fd` (`SO_PEERCRED`); unknown when unreadable.
    private static func peerCredentials(of fd: Int32) -> PeerCredentials {
        var credentials = KernelPeerCredentials()
        var length = socklen_t(MemoryLayout<KernelPeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return .unknown }
        return PeerCredentials(ucred: credentials)
    }
}

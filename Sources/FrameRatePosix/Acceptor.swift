#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix
import FrameRateProtocol
public import Logging

/// Accepts connections on the listening Unix socket on a thread of its own and hands each
/// one, with its peer's credentials, to the server.
///
/// Why not NIO's `ServerBootstrap`: a channel NIO accepts hides its file descriptor, and
/// the tick fan-out writes each connection's socket itself (``SocketWriter``). Accepting
/// here keeps the descriptor; reads stay with NIO.
///
/// Running out of descriptors (`EMFILE`, `ENFILE`) neither spins nor leaves clients
/// hanging: the acceptor keeps one spare descriptor, and when `accept` fails for lack of
/// descriptors it releases the spare, accepts the waiting connection, writes it
/// ``refusal`` (one JSON-RPC error line) and closes it, then takes the spare again. The
/// log line for it is rate-limited to one per second.
public final class Acceptor: Sendable {
    /// The listening socket (bound here or inherited from systemd); closed when the loop ends.
    private let listener: Int32
    /// Written to by ``stop()`` to end ``run(adopt:)``.
    private let wake: (read: Int32, write: Int32)
    private let logger: Logger
    /// The line a connection refused for lack of descriptors is sent before it is closed.
    private let refusal: [UInt8]

    /// - Parameters:
    ///   - listener: a listening stream socket; the acceptor takes ownership.
    ///   - refusal: the bytes sent to a connection accepted only to be refused (no descriptors left).
    public init(listener: Int32, refusal: [UInt8], logger: Logger) throws(PosixError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PosixError(errno: errno, call: "pipe") }
        for fd in fds + [listener] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        self.listener = listener
        self.wake = (fds[0], fds[1])
        self.logger = logger
        self.refusal = refusal
    }

    /// Binds and listens on a Unix socket at `path` (the file must not exist).
    /// - Returns: the listening descriptor.
    public static func listen(path: String, backlog: Int32) throws(PosixError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PosixError(errno: errno, call: "socket") }
        guard let bound = UnixSocketAddress.withAddress(of: path, { bind(fd, $0, $1) }) else {
            close(fd)
            throw PosixError(errno: ENAMETOOLONG, call: "bind \(path)")
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let error = PosixError(errno: errno, call: "bind/listen on \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Accepts until ``stop()``; calls `adopt` with each new connection's descriptor
    /// (non-blocking, close-on-exec) and its peer's credentials, on this thread. Closes the
    /// listener and the pipe at the end.
    public func run(adopt: (Int32, PeerCredentials) -> Void) {
        var spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        var lastShortageLog: Int64 = .min
        var refusedSinceLog = 0
        defer {
            close(listener)
            close(wake.read)
            close(wake.write)
            if spare >= 0 { close(spare) }
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
                let fd = cframerated_accept(listener)
                if fd >= 0 {
                    adopt(fd, PeerCredentials.ofPeer(of: fd))
                    continue
                }
                let error = errno
                switch error {
                case EAGAIN, EWOULDBLOCK: break
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE:
                    // Take the connection with the spare descriptor, tell it why, close it.
                    if spare >= 0 {
                        close(spare)
                        spare = -1
                    }
                    let refused = cframerated_accept(listener)
                    if refused >= 0 {
                        refusal.withUnsafeBytes { _ = SystemCall.send(refused, $0) }
                        close(refused)
                        refusedSinceLog += 1
                    }
                    spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    let now = MonotonicClock.nowNanoseconds
                    if now - lastShortageLog >= 1_000_000_000 {
                        logger.error(
                            "out of file descriptors (\(String(cString: strerror(error)))): refused \(refusedSinceLog) connection(s) with RESOURCE_EXHAUSTED",
                            metadata: ["event": "client-rejected"]
                        )
                        lastShortageLog = now
                        refusedSinceLog = 0
                    }
                    if refused >= 0 { continue }
                    // Nothing could be accepted even with the spare: wait for the next readiness.
                    usleep(1_000)
                case ENOBUFS, ENOMEM:
                    logger.error("cannot accept a connection: \(String(cString: strerror(error))); retrying in 10 ms")
                    usleep(10_000)
                default:
                    logger.error("accept failed: \(String(cString: strerror(error)))")
                }
                break
            }
        }
    }

    /// Ends ``run(adopt:)`` (from any thread).
    public func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix

/// The raw system calls of framerated's I/O layer, each wrapped once with its `EINTR`
/// and `errno` handling (as NIOPosix's `System.swift` does for NIO).
public enum SystemCall {
    /// What one non-blocking `send` did.
    public enum SendOutcome: Equatable, Sendable {
        /// All bytes were taken.
        case complete
        /// The kernel took this many bytes (fewer than offered; possibly 0: `EAGAIN`).
        case partial(Int)
        /// The connection is gone (`EPIPE`, `ECONNRESET`, …): nothing more can be sent.
        case failed(errno: Int32)

        /// The outcome of a send that returned `result` (a byte count, or a negative errno as
        /// io_uring and `cframerated_send_nonblocking` report it) for `requested` bytes.
        public init(result: Int, requested: Int) {
            if result >= requested {
                self = .complete
            } else if result >= 0 {
                self = .partial(result)
            } else if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK) {
                self = .partial(0)
            } else {
                // `magnitude`, not negation: `-Int.min` would trap.
                self = .failed(errno: Int32(clamping: result.magnitude))
            }
        }
    }

    /// Sends `bytes` on `descriptor` without blocking and without `SIGPIPE`, as a bare
    /// system call (not glibc's `send`, a cancellation point: see `cframerated_send_nonblocking`).
    public static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> SendOutcome {
        guard bytes.count > 0 else { return .complete }
        while true {
            let result = cframerated_send_nonblocking(descriptor, bytes.baseAddress, bytes.count)
            if result == -Int(EINTR) { continue }
            return SendOutcome(result: result, requested: bytes.count)
        }
    }

    /// Closes `descriptor`. `EINTR` is not retried: on Linux the descriptor is released anyway.
    public static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// Ends both directions of a connected socket for every process holding it (the peer
    /// reads end of stream even while another copy of the descriptor stays open).
    public static func shutdownBoth(_ descriptor: Int32) {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// The inode of an open descriptor (`fstat`): for a socket, an id that names the
    /// connection as long as it is open, whichever process holds it.
    public static func inode(of descriptor: Int32) -> UInt64? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return UInt64(status.st_ino)
    }

    /// Marks `descriptor` close-on-exec (descriptors systemd passes are not).
    public static func setCloseOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
    }

    /// Whether `descriptor` is a connected Unix stream socket (not a listening one).
    public static func isConnectedStreamSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else { return false }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 else { return false }
        return listening == 0
    }

    /// A second descriptor for the same open socket (close-on-exec).
    public static func duplicate(_ descriptor: Int32) throws(PosixError) -> Int32 {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw PosixError(errno: errno, call: "fcntl(F_DUPFD_CLOEXEC)") }
        return copy
    }

    /// A connected pair of non-blocking Unix stream sockets (tests and self-checks).
    public static func socketPair() throws(PosixError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw PosixError(errno: errno, call: "socketpair") }
        return (fds[0], fds[1])
    }

    /// Sets a socket's kernel send buffer size (`SO_SNDBUF`; the kernel doubles it).
    public static func setSendBufferSize(_ descriptor: Int32, bytes: Int32) {
        var size = bytes
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads up to `buffer.count` bytes without blocking: the count, 0 at end of stream, or
    /// `nil` when nothing is waiting (`EAGAIN`) or the read failed.
    public static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            return nil
        }
    }

    /// The calling thread's kernel id (for `/proc/PID/task/TID`).
    public static var threadID: Int32 { cframerated_gettid() }

    /// Raises `RLIMIT_NOFILE`'s soft limit to its hard limit.
    /// - Returns: the soft limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}

/// A failed system call: which one, and `errno`.
public struct PosixError: Error, CustomStringConvertible, Sendable {
    /// The `errno` value.
    public let errno: Int32
    /// The call that failed.
    public let call: String

    /// Wraps `errno` from `call`.
    public init(errno: Int32, call: String) {
        self.errno = errno
        self.call = call
    }

    /// `call: strerror(errno)`.
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateProtocol

/// What one ``ClientSocket/read(into:)`` got.
public enum ReadOutcome: Sendable, Hashable {
    /// This many bytes (at least one) were appended to the buffer.
    case received(Int)
    /// Nothing to read now (a non-blocking socket).
    case wouldBlock
    /// The peer closed its end: nothing more will come.
    case endOfStream
}

/// One Unix stream socket to the daemon, driven by plain system calls: the client's only
/// file with raw socket calls, under ``LineSession`` and beside the NIO-based
/// ``FrameRateConnection``. For tools that must be cheap per byte (the `framebench` load
/// generator reads thousands of ticks a second with it) and for simple blocking clients.
///
/// It owns its descriptor and closes it on ``close()`` or when the last reference goes.
/// It is not `Sendable`: one thread uses it at a time.
///
/// Reading and waiting work on any stream descriptor, so a pipe adopted with
/// ``init(adopting:)`` can be read the same way; ``send(_:deadline:)`` needs a socket.
public final class ClientSocket {
    /// The descriptor, or -1 once closed.
    public private(set) var descriptor: Int32

    /// Takes ownership of an open stream descriptor (a connected socket, or a pipe's read end).
    public init(adopting descriptor: Int32) {
        precondition(descriptor >= 0, "ClientSocket needs an open descriptor")
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    /// Connects a new blocking, close-on-exec socket to `path`. When the daemon's accept
    /// backlog is full, the kernel makes the call wait for room.
    /// - Throws: the same ``FrameRateClientError`` as ``FrameRateConnection``'s connect
    ///   (``FrameRateClientError/daemonNotRunning(path:)``, ``FrameRateClientError/permissionDenied(path:)``,
    ///   ``FrameRateClientError/connectionFailed(path:reason:)``).
    public static func connect(toPath path: String) throws(FrameRateClientError) -> ClientSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .connectionFailed(path: path, reason: String(cString: strerror(errno))) }
        let socket = ClientSocket(adopting: fd)
        while true {
            guard let result = UnixSocketAddress.withAddress(of: path, { systemConnect(fd, $0, $1) }) else {
                throw .connectionFailed(
                    path: path, reason: "the path is too long for a Unix socket (at most \(UnixSocketAddress.maximumPathLength) bytes)"
                )
            }
            if result == 0 { return socket }
            let error = errno
            // An interrupted connect goes on in the kernel; asking again reports its end.
            if error == EINTR || error == EALREADY { continue }
            if error == EISCONN { return socket }
            throw ConnectFailure.map(errno: error, target: SocketPath.discover(explicit: path), kind: ConnectFailure.pathKind(path))
        }
    }

    /// Closes the descriptor now (later calls fail with ``ClientSocketError/notOpen``).
    public func close() {
        guard descriptor >= 0 else { return }
        _ = systemClose(descriptor)
        descriptor = -1
    }

    /// Makes `read` and `send` return at once instead of waiting (`O_NONBLOCK`), or wait again.
    public func setNonBlocking(_ nonBlocking: Bool) throws(ClientSocketError) {
        let fd = try openDescriptor()
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw .system(call: "fcntl(F_GETFL)", errno: errno) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard wanted == flags || fcntl(fd, F_SETFL, wanted) == 0 else { throw .system(call: "fcntl(F_SETFL)", errno: errno) }
    }

    /// Sends every byte of `bytes`, in order; on a non-blocking socket it waits for room
    /// whenever the socket buffer is full. Never raises `SIGPIPE` (`MSG_NOSIGNAL`).
    /// - Parameter deadline: nanoseconds on `CLOCK_MONOTONIC` (``MonotonicClock/nowNanoseconds``)
    ///   after which waiting for room stops; `Int64.max` for none.
    /// - Throws: ``ClientSocketError/closed`` when the daemon has closed its end,
    ///   ``ClientSocketError/timedOut`` (part of `bytes` may have been sent), or the failed call.
    public func send(_ bytes: UnsafeRawBufferPointer, deadline: Int64 = .max) throws(ClientSocketError) {
        let fd = try openDescriptor()
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = systemSend(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written >= 0 {
                offset += written
                continue
            }
            let error = errno
            switch error {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                guard try wait(for: Int16(POLLOUT), deadline: deadline) else { throw .timedOut }
            case EPIPE, ECONNRESET:
                throw .closed
            default:
                throw .system(call: "send", errno: error)
            }
        }
    }

    /// One `read(2)` into the free space of `buffer` (at most its capacity at once).
    /// - Returns: what the read got; ``ReadOutcome/wouldBlock`` only on a non-blocking socket.
    /// - Throws: ``ClientSocketError/lineTooLong(limit:)`` from the buffer, or the failed call.
    public func read(into buffer: inout LineBuffer) throws(ClientSocketError) -> ReadOutcome {
        try Self.fill(&buffer, from: try openDescriptor(), with: .read)
    }

    /// One `recv(2)` from the connected socket `fd` into the free space of `buffer`, as
    /// ``read(into:)`` does a `read(2)`: for a reader that keeps its descriptors and receive
    /// buffers apart from their ``ClientSocket``s (the `framebench` load generator reads
    /// every connection into one buffer, and does not touch a thousand socket objects a
    /// vsync). The caller keeps `fd` open meanwhile. `recv` goes to the socket directly,
    /// without the file layer `read` passes through (`vfs_read`, `sock_read_iter`): 5–9 %
    /// less of the load generator's CPU a tick at 2,000 links in paired runs
    /// (docs/performance-log.md).
    /// - Returns: what it got; ``ReadOutcome/wouldBlock`` only on a non-blocking socket.
    /// - Throws: ``ClientSocketError/lineTooLong(limit:)`` from the buffer, or the failed
    ///   call (`ENOTSOCK` for a descriptor that is not a socket).
    public static func receive(fromSocket fd: Int32, into buffer: inout LineBuffer) throws(ClientSocketError) -> ReadOutcome {
        try fill(&buffer, from: fd, with: .recv)
    }

    /// The system call that ``fill(_:from:with:)`` reads with.
    private enum ReadCall {
        /// `read(2)`: any stream descriptor.
        case read
        /// `recv(2)`: a socket.
        case recv
    }

    /// One `call` of `fd` into the free space of `buffer`, again when interrupted.
    private static func fill(_ buffer: inout LineBuffer, from fd: Int32, with call: ReadCall) throws(ClientSocketError) -> ReadOutcome {
        var outcome = ReadOutcome.wouldBlock
        try buffer.withWritableSpace { (space) throws(ClientSocketError) -> Int in
            while true {
                let count =
                    switch call {
                    case .read: systemRead(fd, space.baseAddress, space.count)
                    case .recv: systemReceive(fd, space.baseAddress, space.count)
                    }
                if count > 0 {
                    outcome = .received(count)
                    return count
                }
                if count == 0 {
                    outcome = .endOfStream
                    return 0
                }
                let error = errno
                switch error {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return 0
                default: throw .system(call: call == .read ? "read" : "recv", errno: error)
                }
            }
        }
        return outcome
    }

    /// Waits until a read would not block (bytes, the end of the stream, or an error are
    /// there), or until `deadline`.
    /// - Parameter deadline: nanoseconds on `CLOCK_MONOTONIC`; `Int64.max` for none. A
    ///   deadline already past still reports a descriptor that is readable now.
    /// - Returns: whether it is readable; `false` when the deadline passed first.
    public func waitUntilReadable(deadline: Int64 = .max) throws(ClientSocketError) -> Bool {
        try wait(for: Int16(POLLIN), deadline: deadline)
    }

    /// The pid of the process at the other end when it connected (`SO_PEERCRED`), or `nil`.
    public var peerProcessID: Int32? {
        guard descriptor >= 0 else { return nil }
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides it behind _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else { return nil }
        return credentials.pid
    }

    /// The uid of the process at the other end when it connected (`SO_PEERCRED`), or `nil`.
    public var peerUserID: UInt32? {
        guard descriptor >= 0 else { return nil }
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else { return nil }
        return credentials.uid
    }

    private func openDescriptor() throws(ClientSocketError) -> Int32 {
        guard descriptor >= 0 else { throw .notOpen }
        return descriptor
    }

    /// `poll(2)` for `events` until `deadline`, in slices of at most a minute.
    private func wait(for events: Int16, deadline: Int64) throws(ClientSocketError) -> Bool {
        let fd = try openDescriptor()
        while true {
            var timeout: Int32 = -1
            var last = false
            if deadline != .max {
                let remaining = deadline - MonotonicClock.nowNanoseconds
                last = remaining <= 0
                // Rounded up: waking before the deadline only to wait again is a wasted wake-up.
                timeout = last ? 0 : Int32(min((remaining + 999_999) / 1_000_000, 60_000))
            }
            var request = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&request, 1, timeout)
            if ready > 0 { return true }
            if ready < 0 {
                let error = errno
                if error == EINTR { continue }
                throw .system(call: "poll", errno: error)
            }
            if last { return false }
        }
    }
}

// The system calls under their own names, since the methods above shadow some of them.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func systemReceive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { recv(fd, buffer, count, 0) }
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int { send(fd, bytes, count, flags) }
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }

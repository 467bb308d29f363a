#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxEpoll

/// One raw epoll set (level-triggered input): framebench's only use of epoll. A worker
/// puts every socket it reads in one set and waits on it once for many ready sockets.
///
/// Level-triggered, so a socket with more bytes than one `read` takes is simply reported
/// again by the next wait: one `read` per readiness, no read-until-`EAGAIN` loop.
final class ReadinessSet {
    private let descriptor: Int32
    /// Ready descriptors of the last ``wait(timeoutMilliseconds:)``.
    private var ready = [Int32](repeating: -1, count: 256)

    init() throws {
        descriptor = cframerated_epoll_create()
        guard descriptor >= 0 else { throw BenchError.errno("epoll_create1") }
    }

    deinit { close(descriptor) }

    /// Adds `fd`, watched for input and hang-up.
    func watch(_ fd: Int32) throws {
        guard cframerated_epoll_watch_input(descriptor, fd) == 0 else { throw BenchError.errno("epoll_ctl(ADD)") }
    }

    /// Removes `fd` (before it is closed).
    func unwatch(_ fd: Int32) {
        _ = cframerated_epoll_unwatch(descriptor, fd)
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) and calls `body` with each ready
    /// descriptor, at most 256 per call; a signal ending the wait early counts as a timeout.
    func wait(timeoutMilliseconds: Int32, _ body: (Int32) -> Void) throws {
        let count = ready.withUnsafeMutableBufferPointer { fds in
            cframerated_epoll_wait_ready(descriptor, fds.baseAddress, Int32(fds.count), timeoutMilliseconds)
        }
        if count < 0 {
            if errno == EINTR { return }
            throw BenchError.errno("epoll_wait")
        }
        for index in 0..<Int(count) { body(ready[index]) }
    }
}

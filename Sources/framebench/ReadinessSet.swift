#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxEpoll

/// One raw epoll set: framebench's only use of epoll. A worker puts every socket it reads
/// in one set and waits on it once for many ready sockets.
///
/// Sockets are edge-triggered: a ready socket is reported once per arrival of data, and is
/// not polled again by the next wait as a level-triggered one would be (which costs a
/// `poll` of every socket read in the previous wait). The reader must then drain it, which
/// one `read` does whenever it comes back shorter than the space it was given (a Unix
/// stream socket's read takes everything queued, up to that space): no read-until-`EAGAIN`.
final class ReadinessSet {
    private let descriptor: Int32
    /// Ready descriptors of the last ``wait(timeoutMilliseconds:)``.
    private var ready = [Int32](repeating: -1, count: 256)

    init() throws {
        descriptor = cframerated_epoll_create()
        guard descriptor >= 0 else { throw BenchError.errno("epoll_create1") }
    }

    deinit { close(descriptor) }

    /// Adds `fd`, watched for input and hang-up: edge-triggered, or level-triggered
    /// (reported by every wait while readable) when `levelTriggered`.
    func watch(_ fd: Int32, levelTriggered: Bool = false) throws {
        let result = levelTriggered ? cframerated_epoll_watch_input(descriptor, fd) : cframerated_epoll_watch_input_edge(descriptor, fd)
        guard result == 0 else { throw BenchError.errno("epoll_ctl(ADD)") }
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

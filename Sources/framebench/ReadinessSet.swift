#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRatePosix

/// One raw epoll set: framebench's only use of epoll. A worker puts every socket it reads
/// in one set and waits on it once for many ready sockets.
///
/// Sockets are edge-triggered: a ready socket is reported once per arrival of data, and is
/// not polled again by the next wait as a level-triggered one would be (which costs a
/// `poll` of every socket read in the previous wait). The reader must then drain it, which
/// one `read` does whenever it comes back shorter than the space it was given (a Unix
/// stream socket's read takes everything queued, up to that space): no read-until-`EAGAIN`.
final class ReadinessSet {
    private let set: EpollSet

    init() throws {
        set = try EpollSet(capacity: 4096)
    }

    /// Adds `fd`, watched for input and hang-up: edge-triggered, or level-triggered
    /// (reported by every wait while readable) when `levelTriggered`.
    func watch(_ fd: Int32, levelTriggered: Bool = false) throws {
        try set.watchInput(fd, levelTriggered: levelTriggered)
    }

    /// Removes `fd` (before it is closed).
    func unwatch(_ fd: Int32) {
        set.remove(fd)
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) and calls `body` with each ready
    /// descriptor; a signal ending the wait early counts as a timeout.
    func wait(timeoutMilliseconds: Int32, _ body: (Int32) -> Void) throws {
        try set.wait(timeoutMilliseconds: timeoutMilliseconds, body)
    }
}

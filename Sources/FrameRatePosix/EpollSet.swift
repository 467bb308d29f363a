#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix

/// A plain epoll set for readers of many sockets (framebench's workers): add descriptors
/// for input, wait once for many ready ones. Owned and used by one thread.
public final class EpollSet {
    private let descriptor: Int32
    /// Ready descriptors one wait can report: a reader of many sockets takes a whole
    /// vsync's worth in one `epoll_wait`, as a hand-written C reader would.
    public let capacity: Int
    private let tokens: UnsafeMutablePointer<UInt64>
    private let events: UnsafeMutablePointer<UInt32>

    /// Creates the set.
    /// - Parameter capacity: ready descriptors one ``wait(timeoutMilliseconds:_:)`` reports at most (1...65,536).
    public init(capacity: Int = 64) throws(PosixError) {
        precondition((1...65_536).contains(capacity), "epoll capacity out of range")
        descriptor = cframerated_epoll_create()
        guard descriptor >= 0 else { throw PosixError(errno: errno, call: "epoll_create1") }
        self.capacity = capacity
        tokens = .allocate(capacity: capacity)
        events = .allocate(capacity: capacity)
    }

    deinit {
        Glibc.close(descriptor)
        tokens.deallocate()
        events.deallocate()
    }

    /// Watches `fd` for input and hang-up, reported with `fd` itself: edge-triggered (once
    /// per arrival of data; the reader must drain it), or level-triggered when `levelTriggered`.
    public func watchInput(_ fd: Int32, levelTriggered: Bool = false) throws(PosixError) {
        let events = cframerated_epoll_in | cframerated_epoll_rdhup | (levelTriggered ? 0 : cframerated_epoll_edge)
        guard cframerated_epoll_add(descriptor, fd, events, UInt64(UInt32(bitPattern: fd))) == 0 else {
            throw PosixError(errno: errno, call: "epoll_ctl(ADD)")
        }
    }

    /// Stops watching `fd` (before it is closed).
    public func remove(_ fd: Int32) {
        _ = cframerated_epoll_remove(descriptor, fd)
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) and calls `body` with each ready
    /// descriptor, at most ``capacity`` per call. A signal ending the wait early counts as a timeout.
    public func wait(timeoutMilliseconds: Int32, _ body: (Int32) -> Void) throws(PosixError) {
        let count = cframerated_epoll_wait(descriptor, tokens, events, Int32(capacity), timeoutMilliseconds)
        if count < 0 {
            if errno == EINTR { return }
            throw PosixError(errno: errno, call: "epoll_wait")
        }
        for index in 0..<Int(count) { body(Int32(bitPattern: UInt32(truncatingIfNeeded: tokens[index]))) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxEpoll

/// Tells whether any connection has input waiting that NIO has not read yet (a request
/// arriving during a long fan-out), so the fan-out lets the loop serve it instead of
/// making it wait for thousands of writes.
///
/// An epoll set of its own over every connection's socket, asked without blocking: one
/// system call per question, whatever the number of connections. Closing a socket
/// removes it from the set. Confined to the compositor's event loop.
final class InputMonitor {
    private let epoll: Int32

    /// - Returns: `nil` when no epoll instance can be made (the fan-out then never yields early).
    init?() {
        let epoll = cframerated_epoll_create()
        guard epoll >= 0 else { return nil }
        self.epoll = epoll
    }

    deinit { close(epoll) }

    /// Watches a connection's socket for input.
    func watch(_ descriptor: Int32) { _ = cframerated_epoll_watch_input(epoll, descriptor) }

    /// Stops watching a socket (its peer stopped sending: it would stay "ready" forever).
    func unwatch(_ descriptor: Int32) { _ = cframerated_epoll_unwatch(epoll, descriptor) }

    /// Whether some watched connection has input (or a hang-up) waiting now.
    var hasInput: Bool { cframerated_epoll_any_ready(epoll) == 1 }
}

#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#endif

/// A Unix-domain socket address (`sockaddr_un`) for a path: the one place that
/// fills one in, for the daemon's own `bind`/`connect` calls outside NIO and the tools.
public enum UnixSocketAddress {
    /// The longest path a `sockaddr_un` holds, in bytes (its `sun_path` less the final NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Calls `body` with the address of `path` and its length, as `bind(2)` and
    /// `connect(2)` take them.
    /// - Returns: `body`'s result, or `nil` when `path` is longer than ``maximumPathLength``.
    public static func withAddress<Result>(
        of path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result? {
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

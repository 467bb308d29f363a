import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Descriptors passed by systemd (`$LISTEN_FDS`, `$LISTEN_FDNAMES`): the listening socket
/// of socket activation, and whatever the previous process put in the file descriptor
/// store (``FileDescriptorStore``).
public enum ListenedSockets {
    /// A passed listening socket.
    public struct Socket: Sendable, Hashable {
        /// The file descriptor (3 and up).
        public let descriptor: Int32
        /// Its `FileDescriptorName=` (`unknown` when unnamed).
        public let name: String
    }

    /// Why the passed sockets cannot be used.
    public struct Unusable: Error, CustomStringConvertible {
        /// What is wrong and what to change.
        public let description: String
    }

    /// The listening Unix stream socket systemd passed for `name` (or the only one
    /// passed), or `nil` without socket activation. The environment variables are
    /// unset so children do not inherit them.
    /// - Throws: ``Unusable`` when sockets were passed but none fits.
    public static func adopt(named name: String) throws -> Socket? {
        try listener(named: name, in: try takeAll())
    }

    /// The listening Unix stream socket among `passed` named `name`, else the only
    /// passed descriptor when there is one; `nil` when nothing was passed.
    /// - Throws: ``Unusable`` when descriptors were passed but none fits.
    public static func listener(named name: String, in passed: [Socket]) throws -> Socket? {
        guard !passed.isEmpty else { return nil }
        let sockets = passed
        let chosen = sockets.first { $0.name == name } ?? (sockets.count == 1 ? sockets[0] : nil)
        guard let chosen else {
            throw Unusable(
                description: "systemd passed \(sockets.count) sockets (" + sockets.map(\.name).joined(separator: ", ")
                    + "), none named '\(name)'; set FileDescriptorName=\(name) in the socket unit"
            )
        }
        guard sd_is_socket_unix(chosen.descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw Unusable(description: "the socket systemd passed (fd \(chosen.descriptor)) is not a listening Unix stream socket; use ListenStream=/path in the socket unit")
        }
        return chosen
    }

    /// Every descriptor systemd passed (socket activation and its file descriptor store),
    /// with its name; empty when none. The environment variables are unset.
    /// - Throws: ``Unusable`` when `$LISTEN_FDS` is malformed.
    public static func takeAll() throws -> [Socket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                for index in 0..<Int(max(count, 0)) { free(names[index]) }
                free(names)
            }
        }
        guard count > 0 else {
            if count < 0 { throw Unusable(description: "socket activation failed: \(String(cString: strerror(-count)))") }
            return []
        }
        var sockets: [Socket] = []
        for index in 0..<Int(count) {
            let descriptor = SD_LISTEN_FDS_START + Int32(index)
            let label = names.flatMap { $0[index] }.map { String(cString: $0) } ?? "unknown"
            sockets.append(Socket(descriptor: descriptor, name: label))
        }
        return sockets
    }
}

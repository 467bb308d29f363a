#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the daemon's socket lives: the one rule shared by `framerated`,
/// `framectl` and the Swift client (the Python and C clients implement the
/// same rule; docs/protocol.md, "Finding the daemon", states it).
///
/// **Where a daemon listens** (``listenPath(explicit:environment:userID:)``):
/// 1. `--socket PATH`,
/// 2. else `$FRAMERATED_SOCKET`,
/// 3. else ``system`` for root,
/// 4. else `$XDG_RUNTIME_DIR/framerated.sock`,
/// 5. else none: the daemon refuses to start and asks for `--socket` or
///    `XDG_RUNTIME_DIR`. There is no fallback in a shared directory such as
///    `/tmp`, where another user could take the name first.
///
/// **Which daemon a client reaches** (``discover(explicit:environment:isSocket:)``),
/// the same for every user, root included:
/// 1. `--socket PATH` (or the path a program passes),
/// 2. else `$FRAMERATED_SOCKET`,
/// 3. else the per-user daemon, `$XDG_RUNTIME_DIR/framerated.sock`, when a
///    socket exists there,
/// 4. else the system daemon, ``system``.
public enum SocketPath {
    /// The system daemon's path, where `framerated.socket` listens (and root's daemon by default).
    public static let system = "/run/framerated/framerated.sock"

    /// The per-user daemon's file name inside `$XDG_RUNTIME_DIR`.
    public static let perUserName = "framerated.sock"

    /// The variable naming a socket explicitly.
    public static let environmentVariable = "FRAMERATED_SOCKET"

    /// The per-user runtime directory variable (`/run/user/UID`, set by `pam_systemd`).
    public static let runtimeDirectoryVariable = "XDG_RUNTIME_DIR"

    /// The per-user socket path, `$XDG_RUNTIME_DIR/framerated.sock`, or `nil`
    /// when `XDG_RUNTIME_DIR` is unset or empty.
    public static func perUser(environment: [String: String]) -> String? {
        guard let runtime = environment[runtimeDirectoryVariable], !runtime.isEmpty else { return nil }
        return runtime.hasSuffix("/") ? runtime + perUserName : runtime + "/" + perUserName
    }

    /// The path a daemon listens on when systemd does not hand it a socket.
    /// - Parameters:
    ///   - explicit: `--socket PATH`, if given.
    ///   - environment: the process environment.
    ///   - userID: the daemon's effective user id.
    /// - Throws: ``NoListenPath`` when the user is not root and has neither
    ///   `FRAMERATED_SOCKET` nor `XDG_RUNTIME_DIR`.
    public static func listenPath(
        explicit: String?,
        environment: [String: String] = currentEnvironment(),
        userID: UInt32 = effectiveUserID
    ) throws(NoListenPath) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        if userID == 0 { return system }
        if let perUser = perUser(environment: environment) { return perUser }
        throw NoListenPath(userID: userID)
    }

    /// The socket a client connects to, and how it was chosen.
    /// - Parameters:
    ///   - explicit: a path the caller names (`--socket PATH`), if any.
    ///   - environment: the process environment.
    ///   - isSocket: whether a socket exists at a path (following symbolic links, as `connect` does).
    public static func discover(
        explicit: String? = nil,
        environment: [String: String] = currentEnvironment(),
        isSocket: (String) -> Bool = isSocket(at:)
    ) -> SocketDiscovery {
        if let explicit, !explicit.isEmpty { return SocketDiscovery(path: explicit, source: .option) }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty {
            return SocketDiscovery(path: fromEnvironment, source: .environment)
        }
        guard let perUser = perUser(environment: environment) else {
            return SocketDiscovery(path: system, source: .system(perUserCandidate: nil))
        }
        if isSocket(perUser) { return SocketDiscovery(path: perUser, source: .perUser) }
        return SocketDiscovery(path: system, source: .system(perUserCandidate: perUser))
    }

    /// Whether a socket exists at `path` (`stat`, following symbolic links).
    public static func isSocket(at path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// This process's effective user id.
    public static var effectiveUserID: UInt32 { geteuid() }

    /// The process environment as a dictionary.
    public static func currentEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// A non-root daemon with no socket path: no `--socket`, `FRAMERATED_SOCKET` or `XDG_RUNTIME_DIR`.
    public struct NoListenPath: Error, Hashable, Sendable, CustomStringConvertible {
        /// The daemon's effective user id.
        public let userID: UInt32

        public init(userID: UInt32) {
            self.userID = userID
        }

        public var description: String {
            "no socket path: uid \(userID) is not root and XDG_RUNTIME_DIR is not set, so there is no private "
                + "place for the socket. Pass --socket PATH (in a directory only you can write to) "
                + "or set XDG_RUNTIME_DIR (or FRAMERATED_SOCKET)."
        }
    }
}

/// The socket a client chose by the rule of ``SocketPath``, and why; the
/// connect error advice lists exactly the paths looked at.
public struct SocketDiscovery: Hashable, Sendable {
    /// How the path was chosen.
    public enum Source: Hashable, Sendable {
        /// Named by the caller (`--socket PATH`).
        case option
        /// `$FRAMERATED_SOCKET`.
        case environment
        /// The per-user daemon's socket, `$XDG_RUNTIME_DIR/framerated.sock`, which exists.
        case perUser
        /// The system daemon's socket. `perUserCandidate` is the per-user path
        /// that was looked at first and held no socket (`nil` without `XDG_RUNTIME_DIR`).
        case system(perUserCandidate: String?)
    }

    /// The socket to connect to.
    public var path: String
    /// How it was chosen.
    public var source: Source

    public init(path: String, source: Source) {
        self.path = path
        self.source = source
    }

    /// Every path looked at, in order: the per-user candidate (if one was
    /// checked) before the chosen path.
    public var pathsTried: [String] {
        if case .system(let candidate?) = source { return [candidate, path] }
        return [path]
    }
}

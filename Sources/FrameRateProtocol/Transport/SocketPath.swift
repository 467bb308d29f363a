#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the daemon's socket lives. One rule, shared by `framerated`,
/// `framectl` and every client library:
///
/// 1. an explicit path (`--socket PATH`),
/// 2. else `$FRAMERATED_SOCKET`,
/// 3. else `/run/framerated/framerated.sock` for root,
/// 4. else `$XDG_RUNTIME_DIR/framerated.sock`,
/// 5. else (no runtime directory) `/tmp/framerated-UID.sock`.
public enum SocketPath {
    /// The system-wide path, used by root and by the systemd socket unit.
    public static let system = "/run/framerated/framerated.sock"

    /// Resolves the socket path by the rule above.
    /// - Parameters:
    ///   - explicit: a path given on the command line, if any.
    ///   - environment: the process environment (defaults to the real one).
    ///   - userID: the effective user id (defaults to the real one).
    public static func resolve(
        explicit: String? = nil,
        environment: [String: String] = currentEnvironment(),
        userID: UInt32 = effectiveUserID
    ) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment["FRAMERATED_SOCKET"], !fromEnvironment.isEmpty { return fromEnvironment }
        if userID == 0 { return system }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/framerated.sock" }
        return "/tmp/framerated-\(userID).sock"
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
}

/// Why a handover snapshot cannot be used: the daemon then closes the handed-over
/// connections cleanly and the clients' reconnect path takes over.
public enum HandoverSnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes are not a whole JSON document (cut short, or not JSON at all).
    case unreadable(String)
    /// Another format version (an older or newer daemon wrote it).
    case incompatibleFormat(found: Int64?, expected: Int64)
    /// A field is missing or has the wrong type or value.
    case malformed(field: String)
    /// The snapshot does not fit this daemon (other displays, inconsistent state).
    case mismatch(String)

    public var description: String {
        switch self {
        case .unreadable(let detail): "the snapshot is not readable JSON (\(detail))"
        case .incompatibleFormat(let found, let expected):
            "the snapshot has format \(found.map(String.init) ?? "none"); this daemon reads format \(expected)"
        case .malformed(let field): "the snapshot's field \(field) is missing or invalid"
        case .mismatch(let detail): "the snapshot does not fit this daemon: \(detail)"
        }
    }
}

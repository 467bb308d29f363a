/// The 17 canonical gRPC status codes, which framerated uses as its application error space.
///
/// Application errors travel as JSON-RPC errors whose `code` is the number here and whose
/// `data.status` is the ``name`` (see ``RPCError/status(_:_:)``).
public enum GRPCStatusCode: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not an error; returned on success.
    case ok = 0
    /// The operation was cancelled, typically by the caller.
    case cancelled = 1
    /// Unknown error.
    case unknown = 2
    /// The client specified an invalid argument.
    case invalidArgument = 3
    /// The deadline expired before the operation could complete.
    case deadlineExceeded = 4
    /// Some requested entity was not found.
    case notFound = 5
    /// The entity that a client attempted to create already exists.
    case alreadyExists = 6
    /// The caller does not have permission to execute the operation.
    case permissionDenied = 7
    /// Some resource has been exhausted (a quota, a size limit, ...).
    case resourceExhausted = 8
    /// The system is not in a state required for the operation.
    case failedPrecondition = 9
    /// The operation was aborted, typically due to a concurrency issue.
    case aborted = 10
    /// The operation was attempted past the valid range.
    case outOfRange = 11
    /// The operation is not implemented or not supported.
    case unimplemented = 12
    /// Internal error: an invariant expected by the system is broken.
    case internalError = 13
    /// The service is currently unavailable.
    case unavailable = 14
    /// Unrecoverable data loss or corruption.
    case dataLoss = 15
    /// The request does not have valid authentication credentials.
    case unauthenticated = 16

    /// The canonical upper-snake-case name, e.g. `NOT_FOUND`.
    public var name: String {
        switch self {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internalError: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        }
    }

    /// The code with this canonical name (exact, upper case), or `nil`.
    public init?(name: String) {
        guard let code = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = code
    }

    /// The canonical name.
    public var description: String {
        self.name
    }
}

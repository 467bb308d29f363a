public import FrameRateProtocol

/// Why a ``FrameRateConnection`` operation failed. Each case carries what a
/// person needs to fix it, and ``description`` is a sentence they can act on.
public enum FrameRateClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens on the socket chosen (`ENOENT` or `ECONNREFUSED`): the
    /// daemon is not running, or runs with another socket path. The discovery
    /// says which path was tried and which were looked at before it.
    case daemonNotRunning(SocketDiscovery)
    /// The socket at `path` exists but this user may not connect to it (`EACCES`/`EPERM`).
    case permissionDenied(path: String)
    /// Connecting to `path` failed for another reason (e.g. the path is too long
    /// for a Unix socket, or is not a socket); `reason` is the system's explanation.
    case connectionFailed(path: String, reason: String)
    /// The process listening on `path` runs as `uid`, which is neither root,
    /// the `framerated` service user nor this process's user: it may be another
    /// user impersonating the daemon, so the client refused to talk to it.
    case untrustedDaemon(path: String, uid: UInt32)
    /// The daemon answered the request with an error.
    case rpc(RPCError)
    /// The connection closed (or was closed) before the daemon answered.
    case connectionClosed
    /// The daemon sent something that is not valid protocol v1; the connection is closed.
    case protocolViolation(String)
    /// The calling task was cancelled before the daemon answered. The request
    /// may still take effect on the daemon.
    case cancelled
    /// The daemon did not answer `method` within the connection's request timeout
    /// (``FrameRateConnection/requestTimeout``): it may be stopped (`SIGSTOP`), wedged or
    /// overloaded. The request may still take effect; a link or watch it starts then is
    /// released again.
    case timedOut(method: String, after: Duration)

    /// The error as a gRPC status: the daemon's status for ``rpc(_:)``, else
    /// the closest canonical code (`UNAVAILABLE` when the daemon cannot be reached).
    public var status: GRPCStatusCode {
        switch self {
        case .daemonNotRunning, .connectionClosed, .connectionFailed: .unavailable
        case .permissionDenied, .untrustedDaemon: .permissionDenied
        case .rpc(let error): error.grpcStatus
        case .protocolViolation: .internalError
        case .cancelled: .cancelled
        case .timedOut: .deadlineExceeded
        }
    }

    /// The daemon's error, for ``rpc(_:)``.
    public var rpcError: RPCError? {
        if case .rpc(let error) = self { return error }
        return nil
    }

    /// The daemon's own message for ``rpc(_:)`` (for `PERMISSION_DENIED` it names
    /// the admin group); otherwise the same as ``description``.
    public var message: String {
        if case .rpc(let error) = self { return error.message }
        return description
    }

    /// A sentence saying what went wrong and what to do about it.
    public var description: String {
        switch self {
        case .daemonNotRunning(let target):
            return Self.describeNotRunning(target)
        case .untrustedDaemon(let path, let uid):
            return "refusing the daemon at \(path): the process listening there runs as uid \(uid), "
                + "which is neither root, the framerated service user nor you, so it may be impersonating framerated. "
                + "Check who owns that socket, and name the real daemon's socket with --socket PATH or $FRAMERATED_SOCKET."
        case .permissionDenied(let path):
            return "permission denied connecting to \(path): your user may not use this daemon's socket. "
                + "Ask an administrator for access, or run your own daemon with `framerated --socket PATH`."
        case .connectionFailed(let path, let reason):
            return "cannot connect to \(path): \(reason). "
                + "Check that the path names framerated's socket (--socket PATH or $FRAMERATED_SOCKET)."
        case .rpc(let error):
            return Self.describe(error)
        case .connectionClosed:
            return "the daemon closed the connection (it may have stopped or restarted); "
                + "run the command again, and check `systemctl status framerated` if it keeps happening."
        case .protocolViolation(let detail):
            return "the daemon sent a message this client cannot read (\(detail)); "
                + "check that the client and framerated are the same version."
        case .cancelled:
            return "the request was cancelled before the daemon answered."
        case .timedOut(let method, let after):
            return "framerated did not answer \(method) within \(Self.seconds(after)) s: it may be stopped, "
                + "wedged or overloaded; check `systemctl status framerated` (or the daemon you started)."
        }
    }

    /// `duration` in seconds, to the millisecond ("5", "0.25").
    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = WireTime.nanoseconds(of: duration) / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    /// Which paths were tried, and the advice that fits them.
    private static func describeNotRunning(_ target: SocketDiscovery) -> String {
        let path = target.path
        switch target.source {
        case .option:
            return "framerated is not running: nothing is listening on \(path) (the socket asked for). "
                + "Start a daemon there with `framerated --socket \(path)`, or leave the path out to find the default daemon."
        case .environment:
            return "framerated is not running: nothing is listening on \(path) (from $FRAMERATED_SOCKET). "
                + "Start a daemon there with `framerated --socket \(path)`, or unset FRAMERATED_SOCKET to find the default daemon."
        case .perUser:
            return "framerated is not running: nothing is listening on \(path), your per-user daemon's socket "
                + "($XDG_RUNTIME_DIR/framerated.sock; the system daemon is not tried while that socket exists). "
                + "Start your daemon with `framerated`, or remove the stale socket to use the system daemon at \(SocketPath.system)."
        case .system(let candidate?):
            return "framerated is not running: tried \(candidate) (no socket there: no per-user daemon) "
                + "and \(path) (nothing listening: no system daemon). "
                + "Start the system daemon with `systemctl start framerated.socket`, or your own with `framerated`, "
                + "or name a socket with --socket PATH or $FRAMERATED_SOCKET."
        case .system(nil):
            return "framerated is not running: tried \(path) (nothing listening: no system daemon; "
                + "XDG_RUNTIME_DIR is not set, so no per-user daemon was looked for). "
                + "Start the system daemon with `systemctl start framerated.socket`, "
                + "or your own with `framerated --socket PATH` and name it with --socket PATH or $FRAMERATED_SOCKET."
        }
    }

    /// `message: detail (STATUS, field f)` plus a hint for statuses a person can act on.
    private static func describe(_ error: RPCError) -> String {
        let status = error.grpcStatus
        var qualifiers = [status.name]
        if let field = error.data?["field"]?.stringValue { qualifiers.append("field \(field)") }
        var text = error.message
        if let detail = error.data?["detail"]?.stringValue, !detail.isEmpty { text += ": \(detail)" }
        text += " (\(qualifiers.joined(separator: ", ")))"
        switch status {
        case .unimplemented:
            text += "; this daemon does not offer that method, see `framectl describe`"
        case .unavailable:
            text += "; the daemon is shutting down or busy, try again once it is back"
        default:
            break
        }
        return text
    }
}

/// What the server asks the process around it to keep for the next daemon (systemd's
/// file descriptor store): every connection, the snapshot, and a copy of the listening socket.
public struct HandoverDescriptors: Sendable {
    /// Each handed-over connection's socket (the server closes its own copies afterwards).
    public let connections: [Int32]
    /// A sealed memory file holding the snapshot.
    public let snapshot: Int32
    /// A copy of the listening socket (the process around the server knows whether the
    /// service manager passes one anyway, from a socket unit).
    public let listener: Int32?
}

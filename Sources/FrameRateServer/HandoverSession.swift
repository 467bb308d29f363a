import FrameRateModel

/// One connection in a handover snapshot: the owner id its links and watches belong to,
/// the socket that carries it, and what the old daemon had read from it but not handled.
package struct HandoverSession: Hashable, Sendable {
    /// The connection's owner id (kept, so the compositor's links stay its own).
    var owner: OwnerID
    /// The socket's inode: matches the snapshot's record to a descriptor from the store,
    /// whatever order systemd passes them in.
    var inode: UInt64
    /// The watches it holds.
    var watches: [UInt64]
    /// Bytes read and not handled yet (whole lines queued, then a partial line), handled
    /// first by the new daemon as if just read. At most a line limit and one read's lines.
    var pendingInput: [UInt8]
    /// Its tick socket's inode (`TickSocket/Attach`), if it has one: that socket is stored
    /// beside the connection's and comes back as its tick socket, or the connection is not
    /// taken over (its client would wait on a tick socket nothing writes to).
    var tickInode: UInt64? = nil
    /// The new daemon's descriptor for the tick socket, found by ``tickInode`` among those
    /// the store passed back (not part of the snapshot).
    var tickDescriptor: Int32? = nil
}

extension ServerConfiguration {
    /// What the previous daemon left in systemd's file descriptor store, for this one to take over.
    public struct Adoption: Sendable, Hashable {
        /// The memory file with the snapshot, if one was stored.
        public var snapshot: Int32?
        /// The connections' sockets, in any order (matched to the snapshot by inode).
        public var connections: [Int32]

        /// Builds an adoption; the server owns (and closes or serves) every descriptor.
        public init(snapshot: Int32?, connections: [Int32]) {
            self.snapshot = snapshot
            self.connections = connections
        }
    }
}

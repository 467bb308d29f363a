/// What each user holds across all its connections, for the per-user limits (as
/// sd-varlink accounts per UID): connections, links, watches.
///
/// Privileged peers (root, the daemon's own user, the admin group) are counted too, but
/// the limits do not apply to them. Confined to the control loop.
struct UserUsage {
    /// One user's holdings.
    struct Holdings: Hashable {
        var connections = 0
        var links = 0
        var watches = 0
        var isEmpty: Bool { connections == 0 && links == 0 && watches == 0 }
    }

    private var byUser: [UInt32: Holdings] = [:]

    /// What `uid` holds now.
    subscript(uid: UInt32) -> Holdings { byUser[uid] ?? Holdings() }

    /// Adds `change` (negative to release) to what `uid` holds.
    mutating func add(_ uid: UInt32, connections: Int = 0, links: Int = 0, watches: Int = 0) {
        var holdings = byUser[uid] ?? Holdings()
        holdings.connections += connections
        holdings.links += links
        holdings.watches += watches
        byUser[uid] = holdings.isEmpty ? nil : holdings
    }

    /// The number of users holding anything.
    var userCount: Int { byUser.count }
}

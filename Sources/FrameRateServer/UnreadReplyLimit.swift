import FrameRateModel

/// Each unprivileged user's connections whose writers are above their high-water mark
/// (their clients are not reading what they were sent), and the user's connections whose
/// next request waits because there are too many of those.
///
/// A reply is written whole whatever the writer holds, so a connection that asks for a
/// `GetState` and never reads keeps the whole reply in the daemon's memory until it reads
/// or is closed (after `--unwritable-timeout`). The reply rate only slowed how fast a user
/// piled them up: 250 connections of one user, each sending `GetState` with 3,000 links
/// registered, took the daemon from 21 MB to 295 MB in 4 s (`docs/security.md`). With at
/// most ``limit`` such connections a user holds at most ``limit`` unread replies; past
/// it, its connections' next requests wait (never refused) until one of the unread ones
/// drains or closes.
///
/// Confined to the control loop. It takes no time: it is told each writer's state as the
/// control loop learns it.
struct UnreadReplyLimit {
    /// Unread connections a user may have before its other connections' requests wait.
    let limit: Int
    /// Each user's connections above their high-water mark.
    private var unread: [UInt32: Set<OwnerID>] = [:]
    /// Each user's connections waiting for ``unread`` to go below ``limit``.
    private var waiting: [UInt32: Set<OwnerID>] = [:]

    init(limit: Int) {
        precondition(limit >= 1, "the limit must let a user's connection be unread")
        self.limit = limit
    }

    /// How many of `uid`'s connections are unread now.
    func unreadCount(of uid: UInt32) -> Int { unread[uid]?.count ?? 0 }

    /// `owner` of `uid` is unread (`writable == false`) or drained.
    /// - Returns: the connections to resume: `uid`'s waiting ones once it is below the limit.
    mutating func writabilityChanged(of owner: OwnerID, uid: UInt32, writable: Bool) -> Set<OwnerID> {
        if writable {
            guard unread[uid]?.remove(owner) != nil else { return [] }
            if unread[uid]?.isEmpty == true { unread[uid] = nil }
            return releaseIfBelowLimit(uid)
        }
        unread[uid, default: []].insert(owner)
        return []
    }

    /// Whether `owner`'s next request must wait; when it must, it is resumed once `uid` is
    /// below the limit (a connection that is unread itself does not count against its own
    /// request: it waits for its own drain anyway).
    mutating func mustWait(_ owner: OwnerID, uid: UInt32) -> Bool {
        guard let connections = unread[uid] else { return false }
        let others = connections.count - (connections.contains(owner) ? 1 : 0)
        guard others >= limit else { return false }
        waiting[uid, default: []].insert(owner)
        return true
    }

    /// `owner` of `uid` closed: forgotten.
    /// - Returns: the connections to resume, as for ``writabilityChanged(of:uid:writable:)``.
    mutating func closed(_ owner: OwnerID, uid: UInt32) -> Set<OwnerID> {
        waiting[uid]?.remove(owner)
        if waiting[uid]?.isEmpty == true { waiting[uid] = nil }
        return writabilityChanged(of: owner, uid: uid, writable: true)
    }

    private mutating func releaseIfBelowLimit(_ uid: UInt32) -> Set<OwnerID> {
        guard unreadCount(of: uid) < limit, let released = waiting.removeValue(forKey: uid) else { return [] }
        return released
    }
}

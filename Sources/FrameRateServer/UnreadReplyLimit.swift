import FrameRateModel

/// Each unprivileged user's connections that hold replies it has not read or that are
/// still being produced, and the user's connections whose next request waits because
/// there are too many of those.
///
/// A reply is written whole whatever the writer holds, so a connection that asks for a
/// `GetState` and never reads keeps the whole reply in the daemon's memory until it reads
/// or is closed (after `--unwritable-timeout`). The reply rate only slowed how fast a user
/// piled them up: 250 connections of one user, each sending `GetState` with 3,000 links
/// registered, took the daemon from 21 MB to 295 MB in 4 s (`docs/security.md`). A
/// connection counts here:
/// - while its writer is above its high-water mark (whatever put it there: replies,
///   events or ticks its client has not read);
/// - while a line of its is paused between two turns of the loop (``LineInProgress``): its
///   reply is still to come, and counting it stops many connections from each starting a
///   batch that ends in a `GetState` before any of them is unread.
///
/// With at most ``limit`` such connections a user holds at most ``limit`` pending or
/// unread replies (besides those written within one turn of the loop, which the reply
/// rate bounds); past it, its connections' next requests wait (never refused) until one
/// of the others drains, finishes or closes.
///
/// Confined to the control loop. It takes no time: it is told each connection's state as
/// the control loop learns it.
struct UnreadReplyLimit {
    /// Why a connection counts.
    struct Holding: OptionSet, Hashable {
        let rawValue: UInt8
        /// Its writer is above the high-water mark.
        static let unread = Holding(rawValue: 1)
        /// A line of its is paused between turns.
        static let lineInProgress = Holding(rawValue: 2)
    }

    /// Counting connections a user may have before its other connections' requests wait.
    let limit: Int
    /// Each user's counting connections and why each counts.
    private var holding: [UInt32: [OwnerID: Holding]] = [:]
    /// Each user's connections waiting for its count to go below ``limit``.
    private var waiting: [UInt32: Set<OwnerID>] = [:]

    init(limit: Int) {
        precondition(limit >= 1, "the limit must let a user's connection hold a reply")
        self.limit = limit
    }

    /// How many of `uid`'s connections count now.
    func unreadCount(of uid: UInt32) -> Int { holding[uid]?.count ?? 0 }

    /// `owner` of `uid` is above its high-water mark (`writable == false`) or drained.
    /// - Returns: the connections to resume: `uid`'s waiting ones once it is below the limit.
    mutating func writabilityChanged(of owner: OwnerID, uid: UInt32, writable: Bool) -> Set<OwnerID> {
        set(.unread, !writable, of: owner, uid: uid)
    }

    /// A line of `owner` of `uid` is paused between turns (`true`) or is not (any more).
    /// - Returns: the connections to resume, as for ``writabilityChanged(of:uid:writable:)``.
    mutating func lineInProgress(of owner: OwnerID, uid: UInt32, _ inProgress: Bool) -> Set<OwnerID> {
        set(.lineInProgress, inProgress, of: owner, uid: uid)
    }

    /// Whether `owner`'s next request must wait; when it must, it is resumed once `uid` is
    /// below the limit (a connection that counts itself does not count against its own
    /// request: an unread one waits for its own drain anyway).
    mutating func mustWait(_ owner: OwnerID, uid: UInt32) -> Bool {
        guard let connections = holding[uid] else { return false }
        let others = connections.count - (connections[owner] == nil ? 0 : 1)
        guard others >= limit else { return false }
        waiting[uid, default: []].insert(owner)
        return true
    }

    /// `owner` of `uid` closed: forgotten.
    /// - Returns: the connections to resume, as for ``writabilityChanged(of:uid:writable:)``.
    mutating func closed(_ owner: OwnerID, uid: UInt32) -> Set<OwnerID> {
        waiting[uid]?.remove(owner)
        if waiting[uid]?.isEmpty == true { waiting[uid] = nil }
        guard holding[uid]?.removeValue(forKey: owner) != nil else { return [] }
        if holding[uid]?.isEmpty == true { holding[uid] = nil }
        return releaseIfBelowLimit(uid)
    }

    private mutating func set(_ reason: Holding, _ on: Bool, of owner: OwnerID, uid: UInt32) -> Set<OwnerID> {
        var reasons = holding[uid]?[owner] ?? []
        guard reasons.contains(reason) != on else { return [] }
        if on {
            reasons.insert(reason)
            holding[uid, default: [:]][owner] = reasons
            return []
        }
        reasons.remove(reason)
        holding[uid]?[owner] = reasons.isEmpty ? nil : reasons
        if holding[uid]?.isEmpty == true { holding[uid] = nil }
        return reasons.isEmpty ? releaseIfBelowLimit(uid) : []
    }

    private mutating func releaseIfBelowLimit(_ uid: UInt32) -> Set<OwnerID> {
        guard unreadCount(of: uid) < limit, let released = waiting.removeValue(forKey: uid) else { return [] }
        return released
    }
}

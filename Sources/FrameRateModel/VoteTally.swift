/// A display's voting (unpaused) links, grouped by what they vote: kept up to date as
/// links come, go and change, so that a re-arbitration reads one entry per distinct vote
/// instead of walking every link.
///
/// A vote is what arbitration reads of a link (``Key``): its voted range (a boost's while
/// boosted), whether it holds the high-frame-rate entitlement, and its adaptive ceiling.
/// Caps are not part of it: they apply to every vote alike when the ballot is counted
/// (``Arbiter/Ballot``), so a cap change moves no link between entries.
///
/// Cost: O(1) expected per change of a link's vote, plus O(entry size) when the link is
/// not the highest-numbered of the entry it joins or leaves (members are kept sorted, and
/// new links have the highest ids); a batch (``set(_:)``, a vsync's ended boosts) rebuilds
/// each entry it changes once. Re-arbitration walked every link's 664-byte state,
/// about 1 ms at 10,000 links on the Intel VM; the entries are as many as the distinct
/// votes (1,683 in `framebench arbitrate`'s varied set).
struct VoteTally: Sendable {
    /// What arbitration reads of one voting link.
    struct Key: Hashable, Sendable {
        /// The range it votes, before caps: its own, or its boost's while boosted.
        let range: FrameRateRange
        /// Whether its client holds the high-frame-rate entitlement.
        let entitled: Bool
        /// Its adaptive ceiling in Hz (``OverrunMonitor/ceiling``), if adaptive pacing holds it down.
        let overrunCeiling: Double?
    }

    /// The links that vote one ``Key``.
    struct Entry: Sendable {
        let key: Key
        /// Its links, lowest id first (never empty).
        fileprivate(set) var members: [LinkID]
    }

    /// One entry per distinct vote, in no particular order.
    private(set) var entries: [Entry] = []
    /// Each key's position in ``entries``.
    private var positions: [Key: Int] = [:]
    /// Each counted link's key, so that a link is moved or removed by its id alone.
    private var keys: [LinkID: Key] = [:]

    /// How many links vote.
    var count: Int { keys.count }

    /// The vote counted for `link`, or `nil` when it does not vote.
    func key(of link: LinkID) -> Key? { keys[link] }

    /// Counts `link` as voting `key`, or as not voting when `key` is `nil` (paused or gone).
    mutating func set(_ link: LinkID, to key: Key?) {
        let previous = keys[link]
        guard previous != key else { return }
        if let previous { leave(link, previous) }
        keys[link] = key
        if let key { join(link, key) }
    }

    /// Counts each link as voting its key (or as not voting), all at once: what one vsync's
    /// ended boosts do. One by one, each move into an entry of `m` members shifts up to `m`
    /// of them, so `k` links rejoining a popular vote cost O(k·m), under the model lock on
    /// the tick plane (`framebench arbitrate --boost-ends 1024`: that vsync p50 3.1 ms one
    /// by one, 2.0 ms batched, 1.0 ms for an ordinary one). Here each entry changed is rebuilt once: its
    /// members that stay, merged with the joining links sorted, O(m + k log k). A link
    /// named more than once ends as the last names it, as one by one.
    mutating func set(_ changes: [(link: LinkID, key: Key?)]) {
        guard changes.count > 1 else {
            if let change = changes.first { set(change.link, to: change.key) }
            return
        }
        // Each changed entry gets a slot, in the order the changes name them (walked from
        // the last): new entries are appended, and emptied ones replaced by the last, in an
        // order that depends on `changes` alone. A batch is usually many links between two
        // keys (a vsync's ended boosts): the key of the previous lookup is compared before
        // any hashing.
        var slots: [Key: Int] = [:]
        var changed: [Key] = []
        var leaving: [Set<LinkID>] = []
        var joining: [[LinkID]] = []
        var recent: [(key: Key, slot: Int)] = []
        func slot(of key: Key) -> Int {
            if let hit = recent.first(where: { $0.key == key }) { return hit.slot }
            let slot: Int
            if let known = slots[key] {
                slot = known
            } else {
                slot = changed.count
                slots[key] = slot
                changed.append(key)
                leaving.append([])
                joining.append([])
            }
            if recent.count == 2 { recent.removeFirst() }
            recent.append((key, slot))
            return slot
        }
        // Each link moves once, to its last change's key: walked from the last change, a
        // link already moved is skipped.
        var moved: Set<LinkID> = []
        moved.reserveCapacity(changes.count)
        for (link, key) in changes.reversed() where moved.insert(link).inserted {
            let previous = keys[link]
            guard previous != key else { continue }
            if let previous { leaving[slot(of: previous)].insert(link) }
            keys[link] = key
            if let key { joining[slot(of: key)].append(link) }
        }
        for (slot, key) in changed.enumerated() {
            let gone = leaving[slot]
            // Those leaving were members: as many as the members means all of them.
            let kept = positions[key].map { position in
                gone.count == entries[position].members.count ? [] : entries[position].members.filter { !gone.contains($0) }
            } ?? []
            let members = Self.merged(kept, joining[slot].sorted())
            if let position = positions[key] {
                if members.isEmpty { removeEntry(at: position) } else { entries[position].members = members }
            } else if !members.isEmpty {
                positions[key] = entries.count
                entries.append(Entry(key: key, members: members))
            }
        }
    }

    /// Two sorted lists of distinct links as one sorted list.
    private static func merged(_ first: [LinkID], _ second: [LinkID]) -> [LinkID] {
        guard !second.isEmpty else { return first }
        guard !first.isEmpty else { return second }
        var result: [LinkID] = []
        result.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count && j < second.count {
            if first[i] < second[j] {
                result.append(first[i])
                i += 1
            } else {
                result.append(second[j])
                j += 1
            }
        }
        result += first[i...]
        result += second[j...]
        return result
    }

    private mutating func join(_ link: LinkID, _ key: Key) {
        guard let position = positions[key] else {
            positions[key] = entries.count
            entries.append(Entry(key: key, members: [link]))
            return
        }
        let at = Self.insertionPoint(of: link, in: entries[position].members)
        entries[position].members.insert(link, at: at)
    }

    private mutating func leave(_ link: LinkID, _ key: Key) {
        guard let position = positions[key] else { preconditionFailure("\(link) counted under a key without an entry") }
        let at = Self.insertionPoint(of: link, in: entries[position].members)
        precondition(at < entries[position].members.count && entries[position].members[at] == link, "\(link) missing from its entry")
        entries[position].members.remove(at: at)
        if entries[position].members.isEmpty { removeEntry(at: position) }
    }

    /// Removes an emptied entry: the last entry takes its place.
    private mutating func removeEntry(at position: Int) {
        positions[entries[position].key] = nil
        let last = entries.removeLast()
        if position < entries.count {
            entries[position] = last
            positions[last.key] = position
        }
    }

    /// The first index in `members` (sorted) whose id is not below `link`; the end for a
    /// link above every member, checked first (new links have the highest ids).
    private static func insertionPoint(of link: LinkID, in members: [LinkID]) -> Int {
        if let last = members.last, last < link { return members.count }
        var low = 0
        var high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle] < link { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

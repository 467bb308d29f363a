/// Something listed by link, lowest link id first.
protocol LinkKeyed {
    /// The link it is about.
    var linkKey: LinkID { get }
}

extension LinkID: LinkKeyed {
    var linkKey: LinkID { self }
}

extension LinkLimit: LinkKeyed {
    var linkKey: LinkID { link }
}

/// The ``Decision/listLimit`` entries with the lowest link ids seen, sorted, and how
/// many were seen in all: a bounded list that keeps a decision's size independent of
/// the number of links.
///
/// Arbitration keeps one per group of links with the same range, and most groups hold
/// one link: the lowest entry is kept inline and the others' storage is allocated only
/// when a second entry arrives. Cost per insert: O(1) when links come in increasing
/// order (registration order), O(``Decision/listLimit``) at worst.
struct LowestLinks<Element: LinkKeyed> {
    /// The lowest entry, if any.
    private var lowest: Element?
    /// The other listed entries, sorted by link, all above ``lowest``.
    private var rest: [Element] = []
    /// How many entries were inserted, listed or not.
    private(set) var total = 0
    /// The link of the highest listed entry, kept inline so that the common case (a link
    /// above every listed one, once the list is full) never reads the list's storage.
    private var largest = LinkID(rawValue: 0)

    /// The listed entries, lowest link first: `min(total, Decision.listLimit)` of them.
    var items: [Element] {
        guard let lowest else { return [] }
        return [lowest] + rest
    }

    /// Counts `element` and lists it if it is among the lowest.
    /// - Returns: whether it is now the lowest listed.
    @inline(__always) @discardableResult
    mutating func insert(_ element: Element) -> Bool {
        let key = element.linkKey
        let full = total >= Decision.listLimit
        total += 1
        guard let current = lowest else {
            lowest = element
            largest = key
            return true
        }
        if full {
            guard key < largest else { return false }
            rest.removeLast()  // the highest listed makes room (listLimit > 1, so it is in `rest`)
        } else if largest < key {
            if rest.isEmpty { rest.reserveCapacity(Decision.listLimit - 1) }  // one allocation, not one per doubling
            rest.append(element)
            largest = key
            return false
        }
        let isLowest = key < current.linkKey
        if isLowest {
            lowest = element
            rest.insert(current, at: 0)
        } else {
            var index = rest.count
            while index > 0 && key < rest[index - 1].linkKey { index -= 1 }
            rest.insert(element, at: index)
        }
        largest = rest.last?.linkKey ?? key
        return isLowest
    }

    /// Counts `count` entries that cannot be listed: each has at least ``Decision/listLimit``
    /// lower ones among those inserted already (the rest of a sorted run whose first
    /// `listLimit` were inserted).
    @inline(__always)
    mutating func countUnlisted(_ count: Int) {
        assert(count == 0 || total >= Decision.listLimit, "unlisted entries before the list is full")
        total += count
    }

    /// Counts every entry `other` counted and lists those among the lowest. `other` is
    /// sorted, so the walk stops at its first entry that cannot be listed: O(the entries
    /// listed) at most, without building `other`'s ``items``.
    mutating func merge(_ other: LowestLinks<Element>) {
        guard let first = other.lowest else { return }
        let counted = total + other.total
        insert(first)
        for element in other.rest {
            if total >= Decision.listLimit && !(element.linkKey < largest) { break }
            insert(element)
        }
        total = counted
    }
}

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
/// Cost per insert: O(1) when links come in increasing order (registration order)
/// once the list is full, O(``Decision/listLimit``) at worst.
struct LowestLinks<Element: LinkKeyed> {
    /// The lowest-numbered entries, sorted by link.
    private(set) var items: [Element] = []
    /// How many entries were inserted, listed or not.
    private(set) var total = 0

    mutating func insert(_ element: Element) {
        total += 1
        let key = element.linkKey
        if items.count == Decision.listLimit {
            guard key < items[items.count - 1].linkKey else { return }
            items.removeLast()
        }
        var index = items.count
        while index > 0 && key < items[index - 1].linkKey { index -= 1 }
        items.insert(element, at: index)
    }
}

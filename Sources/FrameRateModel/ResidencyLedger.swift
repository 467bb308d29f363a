/// A display's refresh-rate residency: how long it spent at each rate, credited to the
/// holders of the decision in force (its deciders, split evenly; a cap; idle).
///
/// A pure state machine over durations since the display's origin. The display calls
/// ``hold(rate:holders:at:)`` whenever the rate in force or the decision holding it
/// changes; time from one call to the next goes to the earlier call's holders. Calls
/// whose time is before the previous one's (a control request's `now` read after the
/// vsync the tick plane then processes) count from the previous one, so the total
/// never runs backwards and equals the latest time seen.
///
/// Bounded: ended links keep their share by name up to ``endedLimit``; past it the
/// smallest ended holders are merged into ``ResidencyHolder/ended``, down to
/// ``endedKeptAfterMerge`` at once.
struct ResidencyLedger: Sendable {
    /// How many ended links keep their share by name.
    static let endedLimit = 256
    /// How many a merge keeps: it totals every ended link's shares (a lookup per ended link
    /// and rate, 257 × up to 12), so merging one link at a time paid that scan for every
    /// link that ended past the limit, under the model lock: 64 scans for a connection
    /// closing with 64 links. Merging a quarter of the limit at once spreads one scan over
    /// 64 ends.
    static let endedKeptAfterMerge = endedLimit * 3 / 4

    /// Each rate's shares, in the order the rates were first held.
    private var rates: [(rate: Double, shares: [ResidencyHolder: Duration])] = []
    /// The rate in force (index into ``rates``) and who holds it.
    private var current: (index: Int, holders: [ResidencyHolder]) = (0, [])
    /// The end of the accounted time.
    private(set) var mark: Duration = .zero
    /// Each credited link's owner and label.
    private var identities: [LinkID: (owner: OwnerID, label: String?)] = [:]
    /// Links that ended and still hold shares, oldest first.
    private var ended: [LinkID] = []

    /// From `time` on, the display is at `rate` and `holders` hold it there; `identify`
    /// gives a link holder's owner and label.
    mutating func hold(rate: Double, holders: [ResidencyHolder], at time: Duration, identify: (LinkID) -> (OwnerID, String?)?) {
        close(to: time)
        let index: Int
        if let found = rates.firstIndex(where: { FrameRateMath.equal($0.rate, rate) }) {
            index = found
        } else {
            rates.append((rate, [:]))
            index = rates.count - 1
        }
        for case .link(let link) in holders where identities[link] == nil {
            if let identity = identify(link) { identities[link] = identity }
        }
        current = (index, holders.isEmpty ? [.lowest] : holders)
    }

    /// Credits the time from ``mark`` to `time` to the current holders.
    private mutating func close(to time: Duration) {
        guard time > mark, !rates.isEmpty else { return }
        let elapsed = time - mark
        mark = time
        let holders = current.holders
        let share = elapsed / holders.count
        // The first holder takes the division's remainder, so the shares sum to `elapsed` exactly.
        let first = elapsed - share * (holders.count - 1)
        for (position, holder) in holders.enumerated() {
            rates[current.index].shares[holder, default: .zero] += position == 0 ? first : share
        }
    }

    /// The owners of the links the ledger credits by name (live ones, and ended ones it has
    /// not merged away): O(named links), without building any entry.
    var namedOwners: Set<OwnerID> { Set(identities.values.map(\.owner)) }

    /// `link` ended: it keeps its share (and identity) up to ``endedLimit`` ended links.
    mutating func linkEnded(_ link: LinkID) {
        guard identities[link] != nil else { return }
        if current.holders.contains(.link(link)) || rates.contains(where: { $0.shares[.link(link)] != nil }) {
            ended.append(link)
        } else {
            identities[link] = nil
        }
        guard ended.count > Self.endedLimit else { return }
        // Merge the ended links with the smallest totals that no longer hold the display,
        // down to `endedKeptAfterMerge`; equal totals merge the older first.
        var candidates: [(position: Int, total: Duration)] = []
        for (position, candidate) in ended.enumerated() where !current.holders.contains(.link(candidate)) {
            candidates.append((position, rates.reduce(Duration.zero) { $0 + ($1.shares[.link(candidate)] ?? .zero) }))
        }
        candidates.sort { $0.total != $1.total ? $0.total < $1.total : $0.position < $1.position }
        let merging = Set(candidates.prefix(ended.count - Self.endedKeptAfterMerge).map(\.position))
        for position in merging {
            let merged = ended[position]
            for index in rates.indices {
                if let time = rates[index].shares.removeValue(forKey: .link(merged)) {
                    rates[index].shares[.ended, default: .zero] += time
                }
            }
            identities[merged] = nil
        }
        ended = ended.indices.filter { !merging.contains($0) }.map { ended[$0] }
    }

    /// Every rate's time and holders up to `now` (at least up to ``mark``), highest rate first.
    func entries(at now: Duration) -> [ResidencyEntry] {
        var ledger = self
        ledger.close(to: now)
        return ledger.rates.sorted { $0.rate > $1.rate }.map { entry in
            let shares = entry.shares.map { holder, time -> ResidencyShare in
                if case .link(let link) = holder {
                    let identity = ledger.identities[link]
                    return ResidencyShare(holder: holder, owner: identity?.owner, label: identity?.label, time: time)
                }
                return ResidencyShare(holder: holder, owner: nil, label: nil, time: time)
            }.sorted { $0.time != $1.time ? $0.time > $1.time : Self.order($0.holder) < Self.order($1.holder) }
            return ResidencyEntry(rate: entry.rate, time: shares.reduce(.zero) { $0 + $1.time }, heldBy: shares)
        }
    }

    /// A stable order among equal shares: links by id, then the reasons.
    private static func order(_ holder: ResidencyHolder) -> UInt64 {
        switch holder {
        case .link(let link): link.rawValue
        case .cap: UInt64.max - 3
        case .idle: UInt64.max - 2
        case .lowest: UInt64.max - 1
        case .ended: UInt64.max
        }
    }
}

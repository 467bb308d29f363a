/// One link of a display: who holds it, what it asked for, how it is paced.
///
/// Deliberately not nested in the generic ``Display``: a nested type would be generic
/// too, and every per-link step of a vsync would then go through runtime metadata.
struct DisplayLinkState: Sendable {
    let id: LinkID
    let owner: OwnerID
    var configuration: DisplayLinkConfiguration
    var pacer: LinkPacer
    /// When it was registered, as the time since the display's origin.
    let since: Duration
    /// The transient boost in force, if any: the link votes its range instead of its own.
    var boost: LinkBoost? = nil
    /// Adaptive pacing, when the link asked for it (`adaptive: true`).
    var overrun: OverrunMonitor? = nil

    /// The range the link votes and is paced with, before caps: its boost's while boosted.
    var votedRange: FrameRateRange { boost?.range ?? configuration.range }
}

/// One display's whole state: its links, caps, arbitration, governor and vsync grid.
///
/// Internal to the model; ``Compositor`` is the public face.
struct Display<C: Clock>: Sendable where C.Duration == Duration {
    typealias Link = DisplayLinkState

    let id: DisplayID
    /// The display's first vsync: pacers measure time from here.
    let origin: C.Instant
    let arbiter: Arbiter
    private(set) var caps: DisplayCaps
    private(set) var governor: RefreshRateGovernor<C>
    private(set) var timeline: VsyncTimeline<C.Instant>
    /// Links in registration order.
    private(set) var links: [Link] = []
    /// Position of each link in `links`.
    private var positions: [LinkID: Int] = [:]
    /// The end of every boost in force (each link's ``DisplayLinkState/boost``), so the
    /// per-vsync question "does a boost end?" costs O(boosted links), not O(links).
    private var boostEnds: [LinkID: Duration] = [:]

    init(configuration: DisplayConfiguration, governor settings: RefreshRateGovernor<C>.Settings, start: C.Instant) {
        self.id = configuration.id
        self.arbiter = Arbiter(profile: configuration.profile, configuredMaximum: configuration.configuredMaximum)
        self.caps = configuration.caps
        let initial = configuration.profile.initialRate
        self.governor = RefreshRateGovernor(initialRate: initial, settings: settings)
        self.timeline = VsyncTimeline(start: start, rate: initial)
        self.origin = start
        rearbitrate(at: start)
    }

    var refreshRate: Double { governor.currentRate }

    func contains(_ link: LinkID) -> Bool { positions[link] != nil }

    func link(_ id: LinkID) -> Link? { positions[id].map { links[$0] } }

    /// The callback cadence of `link` at `refresh` Hz: its voted range (a boost's while
    /// boosted) under its ceiling and any adaptive hold.
    func cadence(of link: Link, refresh: Double) -> CallbackCadence {
        CallbackCadence(range: effectiveRange(of: link), refresh: refresh)
    }

    /// The range `link` is arbitrated and paced with.
    func effectiveRange(of link: Link) -> FrameRateRange {
        arbiter.effectiveRange(
            of: link.votedRange, hasEntitlement: link.configuration.hasHighFrameRateEntitlement, caps: caps,
            overrunCeiling: link.overrun?.ceiling
        )
    }

    /// How the entitlement, a cap or an adaptive step-down limits `link`, or `nil` when
    /// it may have what it asked for (a boost's range while boosted).
    func limit(of link: Link) -> LinkLimit? {
        arbiter.limit(
            of: link.id, range: link.votedRange, hasEntitlement: link.configuration.hasHighFrameRateEntitlement, caps: caps,
            overrunCeiling: link.overrun?.ceiling
        )
    }

    /// The status a client is told after registering or updating `link`.
    func status(of link: LinkID) -> LinkStatus? {
        guard let link = self.link(link) else { return nil }
        let decision = self.decision
        return LinkStatus(
            link: link.id, display: id, refreshRate: decision.rate,
            callbackRate: cadence(of: link, refresh: decision.rate).callbackRate,
            decision: decision, limit: limit(of: link)
        )
    }

    /// The latest arbitration, with the change it makes if that is not in force yet:
    /// an increase at the next vsync, a decrease (or idle drop) at the first vsync at
    /// or after the governor's deadline.
    var decision: Decision {
        guard let target = governor.target else { preconditionFailure("a display arbitrates when it is built") }
        guard !FrameRateMath.equal(target.rate, refreshRate) else { return target }
        let next = timeline.next.instant
        var due = next
        if target.rate < refreshRate, let deadline = governor.pendingDecreaseDeadline, next < deadline {
            // The first vsync on the current grid at or after the deadline.
            let period = timeline.period
            var periods = Int((next.duration(to: deadline) / period).rounded(.up))
            while next.advanced(by: period * periods) < deadline { periods += 1 }
            while periods > 0 && next.advanced(by: period * (periods - 1)) >= deadline { periods -= 1 }
            due = next.advanced(by: period * periods)
        }
        return target.with(pending: PendingRateChange(rate: target.rate, at: origin.duration(to: due)))
    }

    mutating func add(_ id: LinkID, owner: OwnerID, configuration: DisplayLinkConfiguration, at now: C.Instant) {
        catchUp(to: now)
        positions[id] = links.count
        var link = Link(
            id: id, owner: owner, configuration: configuration,
            pacer: LinkPacer(cadence: CallbackCadence(range: configuration.range, refresh: refreshRate)), since: origin.duration(to: now),
            overrun: configuration.isAdaptive ? OverrunMonitor() : nil
        )
        link.pacer.setCadence(cadence(of: link, refresh: refreshRate))
        links.append(link)
        rearbitrate(at: now)
    }

    mutating func update(_ id: LinkID, range: FrameRateRange?, paused: Bool?, adaptive: Bool? = nil, at now: C.Instant) {
        catchUp(to: now)
        guard let position = positions[id] else { return }
        var link = links[position]
        let wasPaused = link.configuration.isPaused
        if let range { link.configuration.range = range }
        if let paused { link.configuration.isPaused = paused }
        if let adaptive {
            link.configuration.isAdaptive = adaptive
            link.overrun = adaptive ? (link.overrun ?? OverrunMonitor()) : nil
        }
        if wasPaused && !link.configuration.isPaused { link.pacer.resume() }
        // Frames measured under another range or before a pause say nothing about the next ones.
        if range != nil || (wasPaused && !link.configuration.isPaused) { link.overrun?.forgetFrames() }
        link.pacer.setCadence(cadence(of: link, refresh: refreshRate))
        links[position] = link
        rearbitrate(at: now)
    }

    mutating func remove(_ id: LinkID, at now: C.Instant) {
        catchUp(to: now)
        guard let position = positions.removeValue(forKey: id) else { return }
        boostEnds[id] = nil
        links.remove(at: position)
        for index in position..<links.count { positions[links[index].id] = index }
        rearbitrate(at: now)
    }

    /// Removes every link of `owner` with one re-arbitration.
    mutating func removeAll(of owner: OwnerID, at now: C.Instant) -> [LinkID] {
        catchUp(to: now)
        guard let first = links.firstIndex(where: { $0.owner == owner }) else { return [] }
        var removed: [LinkID] = []
        for link in links[first...] where link.owner == owner {
            removed.append(link.id)
            positions[link.id] = nil
            boostEnds[link.id] = nil
        }
        links.removeAll { $0.owner == owner }
        // Only links after the first removed one moved.
        for index in first..<links.count { positions[links[index].id] = index }
        rearbitrate(at: now)
        return removed
    }

    mutating func setCaps(_ caps: DisplayCaps, at now: C.Instant) {
        catchUp(to: now)
        self.caps = caps
        recomputeCadences()
        rearbitrate(at: now)
    }

    mutating func frameDone(_ id: LinkID, sequence: UInt64) throws(CompositorError) {
        guard let position = positions[id] else { throw .linkNotFound(id) }
        guard links[position].pacer.frameDone(sequence: sequence) else {
            throw .sequenceNotDelivered(id, sequence: sequence, lastDelivered: links[position].pacer.lastDelivered)
        }
    }

    /// Records that the client finished the frame for `sequence` at `now`, measures its
    /// frame time from its tick, and feeds an adaptive link's ``OverrunMonitor``; a step
    /// re-paces the link and re-arbitrates at `now`.
    /// - Returns: the adaptive step this frame caused, if any.
    mutating func frameFinished(_ id: LinkID, sequence: UInt64, at now: C.Instant) throws(CompositorError) -> OverrunMonitor.Step? {
        guard let position = positions[id] else { throw .linkNotFound(id) }
        let measurement = links[position].pacer.frameFinished(sequence: sequence, at: origin.duration(to: now))
        switch measurement {
        case .notDelivered:
            throw .sequenceNotDelivered(id, sequence: sequence, lastDelivered: links[position].pacer.lastDelivered)
        case .unmeasured:
            return nil
        case .measured(let frameTime, let interval):
            guard links[position].overrun != nil else { return nil }
            let step = links[position].overrun!.record(
                frameTime: frameTime, interval: interval, callbackRate: links[position].pacer.cadence.callbackRate, refresh: refreshRate
            )
            guard let step else { return nil }
            catchUp(to: now)
            guard let moved = positions[id] else { return step }
            links[moved].pacer.setCadence(cadence(of: links[moved], refresh: refreshRate))
            rearbitrate(at: now)
            return step
        }
    }

    /// Boosts `id` from `now` for `duration` with `range` (its default boost range when
    /// `nil`): extends a running boost's end, never shortens it, and re-arbitrates.
    /// - Returns: when the boost ends, as the time since the display's origin.
    mutating func boost(_ id: LinkID, range: FrameRateRange?, duration: Duration, at now: C.Instant) -> Duration? {
        catchUp(to: now)
        guard let position = positions[id] else { return nil }
        let time = origin.duration(to: now)
        let duration = Swift.min(Swift.max(duration, .zero), LinkBoost.maximumDuration)
        let range = range ?? LinkBoost.defaultRange(for: links[position].configuration.range)
        let boost = links[position].boost?.extended(range: range, now: time, duration: duration)
            ?? LinkBoost(range: range, now: time, duration: duration)
        links[position].boost = boost
        boostEnds[id] = boost.end
        links[position].pacer.setCadence(cadence(of: links[position], refresh: refreshRate))
        rearbitrate(at: now)
        return boost.end
    }

    /// The earliest end of a boost in force, as the time since the display's origin.
    private var earliestBoostEnd: Duration? {
        boostEnds.isEmpty ? nil : boostEnds.values.min()
    }

    /// Ends every boost that ended at or before `now`, in order of their ends, each
    /// re-arbitrating at the instant it ended (so the decrease dwell counts from there).
    private mutating func expireBoosts(through now: C.Instant) {
        let time = origin.duration(to: now)
        // Each pass ends at least one boost: at most one pass per link.
        while let end = earliestBoostEnd, end <= time {
            let refresh = refreshRate
            for (id, linkEnd) in boostEnds where linkEnd == end {
                boostEnds[id] = nil
                guard let index = positions[id] else { continue }
                links[index].boost = nil
                links[index].pacer.setCadence(cadence(of: links[index], refresh: refresh))
            }
            rearbitrate(at: origin.advanced(by: end))
        }
    }

    /// A driver that sleeps while nothing is due leaves the timeline behind `now`; before a
    /// change at `now`, move it up, so that a link joining now ticks at the next vsync after
    /// now, not at one already past. (Not when something is due at or before `now`: the
    /// driver is about to process that vsync.)
    private mutating func catchUp(to now: C.Instant) {
        expireBoosts(through: now)
        if nextEventfulVsync.map({ $0 > now }) ?? true { timeline.skipIdle(to: now) }
    }

    private mutating func rearbitrate(at now: C.Instant) {
        // Reads each link's fields in place: no per-link copy, no LinkVote (and label) per link.
        var ballot = Arbiter.Ballot(arbiter, caps: caps, expectedVotes: links.count)
        for index in links.indices where !links[index].configuration.isPaused {
            ballot.add(
                link: links[index].id, range: links[index].votedRange,
                entitled: links[index].configuration.hasHighFrameRateEntitlement,
                overrunCeiling: links[index].overrun?.ceiling,
                vote: vote(of: links[index])
            )
        }
        governor.observe(arbiter.decide(ballot), at: now)
    }

    /// What `link` votes, named in reasons.
    private func vote(of link: Link) -> LinkVote {
        var vote = LinkVote(
            link: link.id, range: link.votedRange, hasHighFrameRateEntitlement: link.configuration.hasHighFrameRateEntitlement,
            label: link.configuration.label
        )
        vote.isBoosted = link.boost != nil
        return vote
    }

    private mutating func recomputeCadences() {
        let refresh = refreshRate
        for index in links.indices {
            links[index].pacer.setCadence(cadence(of: links[index], refresh: refresh))
        }
    }

    /// The next vsync instant: when the driver should call ``vsync(at:canDeliver:)``.
    var nextVsync: C.Instant { timeline.next.instant }

    /// The first vsync from ``nextVsync`` on at which something happens: an unpaused link's
    /// interval starts, or the governor applies a rate change. `nil` when nothing will
    /// until a link or the caps change: the driver then need not wake for this display.
    /// Skipping the vsyncs before it is exact: at them no link ticks and the rate holds.
    var nextEventfulVsync: C.Instant? {
        let next = timeline.next
        var earliest: UInt64?
        if let target = governor.target, !FrameRateMath.equal(target.refreshRate, refreshRate) {
            if target.refreshRate > refreshRate {
                earliest = next.index
            } else if let deadline = governor.pendingDecreaseDeadline {
                earliest = timeline.firstVsync(atOrAfter: deadline).index
            }
        }
        if let end = earliestBoostEnd {
            let due = timeline.firstVsync(atOrAfter: origin.advanced(by: end)).index
            if earliest == nil || due < earliest! { earliest = due }
        }
        for index in links.indices where !links[index].configuration.isPaused {
            let divisor = UInt64(links[index].pacer.cadence.divisor)
            let due = (next.index + divisor - 1) / divisor * divisor
            if earliest == nil || due < earliest! { earliest = due }
            if due == next.index { break }
        }
        return earliest.map { timeline.vsync(index: $0).instant }
    }

    /// Processes the vsync due at or before `now`.
    mutating func vsync(at now: C.Instant, canDeliver: (OwnerID) -> Bool) -> VsyncReport<C.Instant> {
        // The vsync a boost's end is due at, by index, as ``nextEventfulVsync`` schedules it
        // (an end between two vsyncs is processed at the first one after it).
        let boostDue = earliestBoostEnd.map { ($0, timeline.firstVsync(atOrAfter: origin.advanced(by: $0)).index) }
        let (vsync, missed) = timeline.advance(to: now)
        // A boost ending at or before this vsync re-arbitrates first, at its own end.
        if let (end, due) = boostDue, due <= vsync.index { expireBoosts(through: Swift.max(vsync.instant, origin.advanced(by: end))) }
        let change = governor.vsync(at: vsync.instant)
        if let change {
            timeline.changeRate(to: change.to)
            recomputeCadences()
        }
        let refresh = refreshRate
        let period = timeline.period
        let time = origin.duration(to: vsync.instant)
        var ticks: [Tick<C.Instant>] = []
        ticks.reserveCapacity(links.count)
        // Every link with one divisor shares its target and callback rate: computed once per divisor.
        var lastDivisor = 0
        var target = vsync.instant
        for index in links.indices where !links[index].configuration.isPaused {
            let owner = links[index].owner
            let outcome = links[index].pacer.vsync(index: vsync.index, at: time, period: period, canDeliver: canDeliver(owner))
            guard case .deliver(let sequence, let skipped) = outcome else { continue }
            let cadence = links[index].pacer.cadence
            if cadence.divisor != lastDivisor {
                lastDivisor = cadence.divisor
                target = vsync.instant.advanced(by: period * cadence.divisor)
            }
            var tick = Tick(
                link: links[index].id, owner: owner, sequence: sequence, timestamp: vsync.instant, targetTimestamp: target,
                duration: period, refreshRate: refresh, callbackRate: cadence.callbackRate, skipped: skipped
            )
            if links[index].boost != nil { tick.boosted = true }
            ticks.append(tick)
        }
        return VsyncReport(
            display: id, vsync: vsync.instant, index: vsync.index, missedVsyncs: missed,
            rateChange: change, ticks: ticks, nextVsync: timeline.next.instant
        )
    }

    func snapshot(of id: LinkID) -> LinkSnapshot? {
        guard let link = link(id) else { return nil }
        return linkSnapshot(link)
    }

    private func linkSnapshot(_ link: Link) -> LinkSnapshot {
        LinkSnapshot(
            link: link.id, owner: link.owner, configuration: link.configuration,
            effectiveRange: effectiveRange(of: link),
            callbackRate: link.pacer.cadence.callbackRate, since: link.since, limit: limit(of: link)
        )
    }

    var snapshot: DisplaySnapshot {
        let refresh = refreshRate
        let decision = self.decision
        var reason = decision.reason
        if let pending = decision.pending {
            reason = "moving to \(FrameRateMath.format(pending.rate)) Hz"
                + (pending.rate > refresh
                    ? " at the next vsync"
                    : decision.rule == .idle ? " once the idle timeout and the decrease dwell pass" : " after the decrease dwell")
                + ": \(reason)"
        }
        return DisplaySnapshot(
            id: id, profile: arbiter.profile, refreshRate: refresh, reason: reason,
            targetRate: decision.rate, caps: caps, links: links.map(linkSnapshot), decision: decision
        )
    }
}

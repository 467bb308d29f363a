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
    /// Its recent ticks' targets, previous shown frame and hitch counts.
    var presentation: LinkPresentation
    /// The transient boost in force, if any: the link votes its range instead of its own.
    var boost: LinkBoost? = nil
    /// Adaptive pacing, when the link asked for it (`adaptive: true`).
    var overrun: OverrunMonitor? = nil
    /// Its latest content-velocity report still in force, if any: its panel vote.
    var velocity: ContentVelocityReport? = nil

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
    /// The cadences of the ranges arbitration has scored, kept across arbitrations
    /// (``CadenceTable``). An arbitration takes the table out (`cadences.take()`) and puts
    /// it back: it reads the links through `self` while it adds rows, and with the table
    /// still in `self` each arbitration copied the whole table (hundreds of KB with
    /// thousands of distinct ranges) to add one.
    private var cadences: CadenceTable?
    /// The same for the panel arbitration (``arbitrateGridAndPanel(grid:panel:)``), apart: each
    /// table is compacted to its own arbitration's ranges, which would evict the other's.
    private var panelCadences: CadenceTable?
    private(set) var caps: DisplayCaps
    private(set) var governor: RefreshRateGovernor<C>
    private(set) var timeline: VsyncTimeline<C.Instant>
    /// Links in registration order, each in a slot it keeps while it lives (``LinkTable``).
    private(set) var links = LinkTable()
    /// The divisor each unpaused link ticks at, kept in step with `links` by
    /// ``recountTicking(at:)`` after every change to a link's cadence or pause: what
    /// ``nextEventfulVsync(of:)`` reads, in O(distinct divisors) instead of a pass over
    /// the links (three times a vsync on the tick plane, and once at every change).
    private var ticking = TickingDivisors()
    /// The unpaused links grouped by what they vote, kept in step with `links` by
    /// ``recountVote(at:)`` after every change to a link's vote: what the grid arbitration reads.
    private var tally = VoteTally()
    /// Each link's frame committed by `Present` and not shown yet.
    private var pendingFrames: [LinkID: PendingFrame] = [:]
    /// Time at each rate and who held it there.
    private(set) var residency = ResidencyLedger()
    /// The end of every boost in force (each link's ``DisplayLinkState/boost``), so the
    /// per-vsync question "does a boost end?" costs O(boosted links), not O(links).
    private var boostEnds: [LinkID: Duration] = [:]
    /// The panel's rate: the same timing rules as ``governor``'s, over the panel
    /// arbitration, where links reporting content velocity vote their velocity table's
    /// rate (``arbitrateGridAndPanel(grid:panel:)``). Without a report in force it sees exactly the
    /// decisions ``governor`` sees, so the panel runs at the grid rate.
    private(set) var panel: RefreshRateGovernor<C>
    /// When each link's content-velocity report in force expires (each link's
    /// ``DisplayLinkState/velocity``), as the time since the display's origin.
    private var velocityExpiries: [LinkID: Duration] = [:]
    /// Re-arbitrations so far: each costs a pass over the display's distinct votes and
    /// its links with a velocity report in force (the tests bound how many one vsync may run).
    private(set) var rearbitrations = 0

    init(configuration: DisplayConfiguration, governor settings: RefreshRateGovernor<C>.Settings, start: C.Instant) {
        self.id = configuration.id
        self.arbiter = Arbiter(profile: configuration.profile, configuredMaximum: configuration.configuredMaximum)
        self.cadences = CadenceTable(rates: configuration.profile.supportedRates, seed: arbiter.hashSeed)
        self.panelCadences = CadenceTable(rates: configuration.profile.supportedRates, seed: arbiter.hashSeed)
        self.caps = configuration.caps
        let initial = configuration.profile.initialRate
        let governor = RefreshRateGovernor<C>(initialRate: initial, settings: settings)
        self.governor = governor
        self.panel = governor
        self.timeline = VsyncTimeline(start: start, rate: initial)
        self.origin = start
        // Until a link votes, the initial rate is held by nobody: idle.
        residency.hold(rate: initial, holders: [.idle], at: .zero) { _ in nil }
        rearbitrate(at: start)
    }

    /// A display restored from `checkpoint` at a handover; its arbitration target is
    /// computed again from the restored links and caps.
    /// - Throws: ``CheckpointMismatch`` when the checkpoint is for another display or inconsistent.
    init(
        configuration: DisplayConfiguration, governor settings: RefreshRateGovernor<C>.Settings, start: C.Instant,
        restoring checkpoint: DisplayCheckpoint
    ) throws(CheckpointMismatch) {
        guard checkpoint.id == configuration.id else {
            throw CheckpointMismatch("the snapshot's display \(checkpoint.id.rawValue) is display \(configuration.id.rawValue) here")
        }
        guard configuration.profile.supportedRates.contains(where: { FrameRateMath.equal($0, checkpoint.refreshRate) }) else {
            throw CheckpointMismatch(
                "display \(checkpoint.id.rawValue) ran at \(FrameRateMath.format(checkpoint.refreshRate)) Hz, which its profile here (\(configuration.profile.description)) does not support"
            )
        }
        guard checkpoint.lastIndex >= checkpoint.anchorIndex, checkpoint.anchorTime >= .zero else {
            throw CheckpointMismatch("display \(checkpoint.id.rawValue)'s vsync grid is inconsistent")
        }
        self.id = configuration.id
        self.arbiter = Arbiter(profile: configuration.profile, configuredMaximum: configuration.configuredMaximum)
        self.cadences = CadenceTable(rates: configuration.profile.supportedRates, seed: arbiter.hashSeed)
        self.panelCadences = CadenceTable(rates: configuration.profile.supportedRates, seed: arbiter.hashSeed)
        self.caps = checkpoint.caps
        self.origin = start
        self.timeline = VsyncTimeline(
            anchor: .init(index: checkpoint.anchorIndex, instant: start.advanced(by: checkpoint.anchorTime)),
            rate: checkpoint.refreshRate, lastIndex: checkpoint.lastIndex
        )
        // A placeholder until the links are in: the target is arbitrated from them below.
        self.governor = RefreshRateGovernor(initialRate: checkpoint.refreshRate, settings: settings)
        self.panel = governor
        for link in checkpoint.links {
            guard !links.contains(link.link) else { throw CheckpointMismatch("\(link.link) appears twice in the snapshot") }
            guard link.pacing.isConsistent else { throw CheckpointMismatch("\(link.link)'s sequence numbers are inconsistent") }
            var restored = Link(
                id: link.link, owner: link.owner, configuration: link.configuration,
                pacer: LinkPacer(cadence: CallbackCadence(range: link.configuration.range, refresh: checkpoint.refreshRate), restoring: link.pacing),
                since: link.since,
                // Hitch counts, residency, boosts and an adaptive link's frame history are not
                // in the handover snapshot (format 1): they start again from the handover.
                presentation: LinkPresentation(since: link.since, paused: link.configuration.isPaused),
                overrun: link.configuration.isAdaptive ? OverrunMonitor() : nil
            )
            restored.pacer = LinkPacer(cadence: cadence(of: restored, refresh: checkpoint.refreshRate), restoring: link.pacing)
            let slot = links.append(restored)
            recountVote(at: slot)
            recountTicking(at: slot)
        }
        var table = cadences.take()
        let decision = arbitrate(cadences: &table)
        cadences = table
        governor = RefreshRateGovernor(
            restoringRate: checkpoint.refreshRate, reason: checkpoint.reason, target: decision,
            idleSince: checkpoint.idleSince.map { start.advanced(by: $0) },
            decreaseWantedSince: checkpoint.decreaseWantedSince.map { start.advanced(by: $0) }, settings: settings
        )
        // Velocity reports are not in the snapshot (they expire within 0.5 s): the panel
        // restarts at the grid rate.
        panel = governor
        holdResidency(decision, rate: checkpoint.refreshRate, at: .zero)
    }

    /// Everything about the display a handover needs (times since ``origin``).
    var checkpoint: DisplayCheckpoint {
        let timers = governor.timers
        return DisplayCheckpoint(
            id: id, caps: caps, refreshRate: governor.currentRate, reason: governor.currentReason,
            anchorIndex: timeline.anchor.index, anchorTime: origin.duration(to: timeline.anchor.instant),
            lastIndex: timeline.last.index, idleSince: timers.idleSince.map { origin.duration(to: $0) },
            decreaseWantedSince: timers.decreaseWantedSince.map { origin.duration(to: $0) },
            links: links.map {
                LinkCheckpoint(link: $0.id, owner: $0.owner, configuration: $0.configuration, since: $0.since, pacing: $0.pacer.checkpoint)
            }
        )
    }

    /// The grid rate in force, in Hz: the display's vsync timeline and every link's pacing.
    var refreshRate: Double { governor.currentRate }

    /// The panel rate in force, in Hz: what the panel shows frames at. Below
    /// ``refreshRate`` only while a link's content velocity lowers it; never above.
    var panelRate: Double { Swift.min(panel.currentRate, governor.currentRate) }

    func contains(_ link: LinkID) -> Bool { links.contains(link) }

    /// Whether an unpaused link (one that ticks) is on the display.
    var hasTickingLink: Bool { !ticking.counts.isEmpty }

    func link(_ id: LinkID) -> Link? { links.slot(of: id).map { links[$0] } }

    /// The callback cadence of `link` at `refresh` Hz: its voted range (a boost's while
    /// boosted) under its ceiling and any adaptive hold.
    func cadence(of link: Link, refresh: Double) -> CallbackCadence {
        Self.cadence(of: link, refresh: refresh, arbiter: arbiter, caps: caps)
    }

    /// The same, from what it depends on. A loop that writes the links calls this one: the
    /// method, called there, copied the whole display for each link (1,516 instructions a
    /// link at each rate change; `@inline(__always)` on the method does not help).
    static func cadence(of link: Link, refresh: Double, arbiter: Arbiter, caps: DisplayCaps) -> CallbackCadence {
        CallbackCadence(range: effectiveRange(of: link, arbiter: arbiter, caps: caps), refresh: refresh)
    }

    /// The range `link` is arbitrated and paced with.
    func effectiveRange(of link: Link) -> FrameRateRange {
        Self.effectiveRange(of: link, arbiter: arbiter, caps: caps)
    }

    static func effectiveRange(of link: Link, arbiter: Arbiter, caps: DisplayCaps) -> FrameRateRange {
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
    var decision: Decision { pendingDecision(of: governor) }

    /// The latest panel arbitration, with its pending change, or `nil` when no
    /// content-velocity report is in force and the panel runs at the grid rate (the
    /// panel decision is then ``decision``).
    var panelDecision: Decision? {
        guard !velocityExpiries.isEmpty || !FrameRateMath.equal(panelRate, refreshRate) else { return nil }
        return pendingDecision(of: panel)
    }

    /// `governor`'s target, with the change it makes if that is not in force yet.
    private func pendingDecision(of governor: RefreshRateGovernor<C>) -> Decision {
        guard let target = governor.target else { preconditionFailure("a display arbitrates when it is built") }
        let current = governor.currentRate
        guard !FrameRateMath.equal(target.rate, current) else { return target }
        let next = timeline.next.instant
        var due = next
        if target.rate < current, let deadline = governor.pendingDecreaseDeadline, next < deadline {
            // The first vsync on the current grid at or after the deadline.
            let period = timeline.period
            // Through `wholeNumber`: the dwell comes from configuration, but a bare `Int(_:)`
            // of a Double traps on NaN or a value past Int's range.
            var periods: Int = FrameRateMath.wholeNumber((next.duration(to: deadline) / period).rounded(.up), clampedTo: 0...(Int.max / 2))
            while next.advanced(by: FrameRateMath.times(period, periods)) < deadline { periods += 1 }
            while periods > 0 && next.advanced(by: FrameRateMath.times(period, periods - 1)) >= deadline { periods -= 1 }
            due = next.advanced(by: FrameRateMath.times(period, periods))
        }
        return target.with(pending: PendingRateChange(rate: target.rate, at: origin.duration(to: due)))
    }

    mutating func add(_ id: LinkID, owner: OwnerID, configuration: DisplayLinkConfiguration, at now: C.Instant) {
        catchUp(to: now)
        let since = origin.duration(to: now)
        var link = Link(
            id: id, owner: owner, configuration: configuration,
            pacer: LinkPacer(cadence: CallbackCadence(range: configuration.range, refresh: refreshRate)), since: since,
            presentation: LinkPresentation(since: since, paused: configuration.isPaused),
            overrun: configuration.isAdaptive ? OverrunMonitor() : nil
        )
        link.pacer.setCadence(cadence(of: link, refresh: refreshRate))
        let slot = links.append(link)
        recountVote(at: slot)
        recountTicking(at: slot)
        rearbitrate(at: now)
    }

    mutating func update(_ id: LinkID, range: FrameRateRange?, paused: Bool?, adaptive: Bool? = nil, at now: C.Instant) {
        catchUp(to: now)
        guard let position = links.slot(of: id) else { return }
        // The link is changed in place: a copy shared its arrays (the hitch window, up to
        // 8,192 entries of 32 bytes), so changing them copied them on every pause or resume.
        let wasPaused = links[position].configuration.isPaused
        if let range { links[position].configuration.range = range }
        if let paused { links[position].configuration.isPaused = paused }
        if let adaptive {
            links[position].configuration.isAdaptive = adaptive
            if !adaptive {
                links[position].overrun = nil
            } else if links[position].overrun == nil {
                links[position].overrun = OverrunMonitor()
            }
        }
        let isPaused = links[position].configuration.isPaused
        if wasPaused && !isPaused { links[position].pacer.resume() }
        if wasPaused != isPaused {
            let time = origin.duration(to: now)
            links[position].presentation.hitches.setPaused(isPaused, at: time)
        }
        // Frames measured under another range or before a pause say nothing about the next ones.
        if range != nil || (wasPaused && !isPaused) { links[position].overrun?.forgetFrames() }
        let cadence = cadence(of: links[position], refresh: refreshRate)
        links[position].pacer.setCadence(cadence)
        recountVote(at: position)
        recountTicking(at: position)
        rearbitrate(at: now)
    }

    /// Sets `id`'s number of frame timelines and frame latency (each when not `nil`).
    mutating func setFrameTiming(_ id: LinkID, timelines: Int?, frameLatency: Int?) {
        guard let position = links.slot(of: id) else { return }
        if let timelines { links[position].configuration.timelines = timelines }
        if let frameLatency { links[position].configuration.frameLatency = frameLatency }
    }

    mutating func remove(_ id: LinkID, at now: C.Instant) {
        _ = remove([id], at: now)
    }

    /// Removes the links of `ids` that are on the display, with one re-arbitration (none
    /// when it holds none of them). O(removed links + links on the display), the latter a
    /// pass over 4-byte slot numbers (``LinkTable``).
    /// - Returns: the ids removed, in the order `ids` gave them.
    mutating func remove(_ ids: [LinkID], at now: C.Instant) -> [LinkID] {
        catchUp(to: now)
        let removed = links.remove(ids)
        guard !removed.isEmpty else { return [] }
        for id in removed {
            tally.set(id, to: nil)
            ticking.set(id, to: nil)
            pendingFrames[id] = nil
            residency.linkEnded(id)
            boostEnds[id] = nil
            velocityExpiries[id] = nil
        }
        rearbitrate(at: now)
        return removed
    }

    mutating func setCaps(_ caps: DisplayCaps, at now: C.Instant) {
        catchUp(to: now)
        self.caps = caps
        recomputeCadences()
        rearbitrate(at: now)
    }

    /// `Present`: the frame for tick `sequence` of link `id` is committed at `now`. It shows
    /// at the first vsync at or after the latest of `now`, `notBefore` (`at`), and the
    /// link's previous shown frame plus `minimumInterval` (`afterMinimumDuration`).
    ///
    /// A valid Present is also the frame-done report of ``frameFinished(_:sequence:at:)``
    /// (pacing, frame time, an adaptive link's step); everything is validated first, so a
    /// refused Present changes nothing.
    /// - Returns: the frame it replaces, dropped, if one was still pending, and the
    ///   adaptive step the frame caused, if any.
    mutating func present(
        _ id: LinkID, sequence: UInt64, notBefore: C.Instant?, minimumInterval: Duration?, vsyncID: UInt64? = nil, at now: C.Instant
    ) throws(CompositorError) -> (replaced: Presentation<C.Instant>?, step: OverrunMonitor.Step?) {
        guard let position = links.slot(of: id) else { throw .linkNotFound(id) }
        let lastDelivered = links[position].pacer.lastDelivered
        guard sequence > 0, sequence <= lastDelivered else {
            throw .sequenceNotDelivered(id, sequence: sequence, lastDelivered: lastDelivered)
        }
        guard let delivered = links[position].presentation.tick(sequence) else {
            let oldest = links[position].presentation.oldestKnown
            // Among the ticks the link keeps but not one of them: an interval it skipped, never sent.
            if sequence >= oldest { throw .sequenceNotDelivered(id, sequence: sequence, lastDelivered: lastDelivered) }
            throw .sequenceTooOld(id, sequence: sequence, oldest: oldest)
        }
        var expected = delivered.target
        var earliest = origin.duration(to: now)
        if let vsyncID {
            expected = try aimedPresentation(of: delivered, vsyncID: vsyncID, link: id)
        }
        // Valid: from here on it counts. The frame-time measurement comes first, as for
        // FrameDone (it cannot fail now). A step re-paces and re-arbitrates, which neither
        // adds nor removes links, so `position` still holds.
        let step = try frameFinished(id, sequence: sequence, at: now)
        var link = links[position]
        // A frame aimed later than its tick's target (latency 2, or a later timeline) waits for it.
        if vsyncID != nil || delivered.latency > 1 { earliest = max(earliest, expected) }
        link.presentation.presenting()
        if let notBefore { earliest = max(earliest, origin.duration(to: notBefore)) }
        if let minimumInterval, let lastShown = link.presentation.lastShown { earliest = max(earliest, lastShown + minimumInterval) }
        var replaced: Presentation<C.Instant>?
        if let pending = pendingFrames[id] {
            link.presentation.hitches.droppedFrame()
            replaced = Presentation(
                link: id, owner: link.owner, sequence: pending.sequence, presentedTime: nil,
                expectedTime: origin.advanced(by: pending.expected), hitch: .zero
            )
        }
        links[position] = link
        pendingFrames[id] = PendingFrame(sequence: sequence, expected: expected, notBefore: earliest)
        return (replaced, step)
    }

    /// Shows every pending frame due at the vsync at `time` (since the origin).
    private mutating func showFrames(at time: Duration, vsync: C.Instant) -> [Presentation<C.Instant>] {
        // The due frames are found first and removed after: removing while iterating the
        // dictionary copied it (the loop holds its storage), up to 1,024 pending frames a
        // user, at every vsync that showed one.
        var due: [(id: LinkID, frame: PendingFrame)] = []
        for (id, frame) in pendingFrames where frame.notBefore - PendingFrame.slack <= time { due.append((id, frame)) }
        var shown: [Presentation<C.Instant>] = []
        shown.reserveCapacity(due.count)
        for (id, frame) in due {
            pendingFrames[id] = nil
            guard let position = links.slot(of: id) else { continue }
            let lateness = time - frame.expected
            let hitch = lateness >= HitchCounter.tolerance ? lateness : .zero
            links[position].presentation.shown(at: time, hitch: hitch)
            shown.append(
                Presentation(
                    link: id, owner: links[position].owner, sequence: frame.sequence, presentedTime: vsync,
                    expectedTime: origin.advanced(by: frame.expected), hitch: hitch
                )
            )
        }
        shown.sort { $0.link < $1.link }
        return shown
    }

    mutating func frameDone(_ id: LinkID, sequence: UInt64) throws(CompositorError) {
        guard let position = links.slot(of: id) else { throw .linkNotFound(id) }
        guard links[position].pacer.frameDone(sequence: sequence) else {
            throw .sequenceNotDelivered(id, sequence: sequence, lastDelivered: links[position].pacer.lastDelivered)
        }
    }

    /// Records that the client finished the frame for `sequence` at `now`, measures its
    /// frame time from its tick, and feeds an adaptive link's ``OverrunMonitor``; a step
    /// re-paces the link and re-arbitrates at `now`.
    /// - Returns: the adaptive step this frame caused, if any.
    mutating func frameFinished(_ id: LinkID, sequence: UInt64, at now: C.Instant) throws(CompositorError) -> OverrunMonitor.Step? {
        guard let position = links.slot(of: id) else { throw .linkNotFound(id) }
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
            // The step moved the link's ceiling: recounted before catching up, whose boost
            // and velocity expiries re-arbitrate with every link's vote as it now stands.
            recountVote(at: position)
            // Catching up ends boosts and velocity reports, never links: the slot still holds.
            catchUp(to: now)
            links[position].pacer.setCadence(cadence(of: links[position], refresh: refreshRate))
            recountTicking(at: position)
            rearbitrate(at: now)
            return step
        }
    }

    /// Boosts `id` from `now` for `duration` with `range` (its default boost range when
    /// `nil`): extends a running boost's end, never shortens it, and re-arbitrates.
    /// - Returns: when the boost ends, as the time since the display's origin.
    mutating func boost(_ id: LinkID, range: FrameRateRange?, duration: Duration, at now: C.Instant) -> Duration? {
        catchUp(to: now)
        guard let position = links.slot(of: id) else { return nil }
        let time = origin.duration(to: now)
        let duration = Swift.min(Swift.max(duration, .zero), LinkBoost.maximumDuration)
        let range = range ?? LinkBoost.defaultRange(for: links[position].configuration.range)
        let boost = links[position].boost?.extended(range: range, now: time, duration: duration)
            ?? LinkBoost(range: range, now: time, duration: duration)
        links[position].boost = boost
        boostEnds[id] = boost.end
        links[position].pacer.setCadence(cadence(of: links[position], refresh: refreshRate))
        recountVote(at: position)
        recountTicking(at: position)
        rearbitrate(at: now)
        return boost.end
    }

    /// The earliest end of a boost in force, as the time since the display's origin.
    private var earliestBoostEnd: Duration? { Self.firstEnd(of: boostEnds) }

    /// Ends every boost that ended at or before `now`, in order of their ends. The boosts
    /// that end before the same vsync end together, re-arbitrating once, at the last of
    /// their ends (the decrease dwell counts from there): a rate change takes effect at a
    /// vsync anyway, and one re-arbitration per end let a user who gave 1,024 links
    /// boosts ending a few microseconds apart make one vsync re-arbitrate 1,024 times,
    /// under the model lock, on the tick plane.
    private mutating func expireBoosts(through now: C.Instant) {
        let time = origin.duration(to: now)
        guard let earliest = earliestBoostEnd, earliest <= time else { return }
        // By end, then by id: the dictionary's order would otherwise order equal ends.
        let ended = boostEnds.filter { $0.value <= time }.sorted { $0.value != $1.value ? $0.value < $1.value : $0.key < $1.key }
        let (arbiter, caps) = (self.arbiter, self.caps)
        for group in groupedByVsync(ended) {
            let refresh = refreshRate
            // The group's votes move in one batch (``VoteTally/set(_:)``): one by one, each
            // rejoining link shifted the members of the vote it rejoined.
            var votes: [(link: LinkID, key: VoteTally.Key?)] = []
            votes.reserveCapacity(group.count)
            for (id, _) in ended[group] {
                boostEnds[id] = nil
                guard let index = links.slot(of: id) else { continue }
                links[index].boost = nil
                links[index].pacer.setCadence(Self.cadence(of: links[index], refresh: refresh, arbiter: arbiter, caps: caps))
                recountTicking(at: index)
                votes.append((id, Self.voteKey(of: links[index])))
            }
            tally.set(votes)
            rearbitrate(at: origin.advanced(by: ended[group.upperBound - 1].value))
        }
    }

    /// Splits `ends` (in order, as times since the display's origin) into runs that fall
    /// before the same vsync. An end at or before the current run's vsync belongs to it (the
    /// ends are sorted), so the grid is consulted once per run, not once per end (1,024
    /// boosts ending before one vsync looked it up 1,024 times, a fifth of that vsync's
    /// extra cost in `framebench arbitrate --boost-ends 1024`).
    private func groupedByVsync(_ ends: [(key: LinkID, value: Duration)]) -> [Range<Int>] {
        var groups: [Range<Int>] = []
        var start = 0
        var due: VsyncTimeline<C.Instant>.Vsync?
        for index in ends.indices {
            let end = origin.advanced(by: ends[index].value)
            if let current = due, end <= current.instant { continue }
            let next = timeline.firstVsync(atOrAfter: end)
            if let current = due {
                if next.index == current.index { continue }
                groups.append(start..<index)
                start = index
            }
            due = next
        }
        if !ends.isEmpty { groups.append(start..<ends.count) }
        return groups
    }

    /// A driver that sleeps while nothing is due leaves the timeline behind `now`; before a
    /// change at `now`, move it up, so that a link joining now ticks at the next vsync after
    /// now, not at one already past. (Not when something is due at or before `now`: the
    /// driver is about to process that vsync.)
    private mutating func catchUp(to now: C.Instant) {
        expireBoosts(through: now)
        expireVelocities(through: now)
        if nextEventfulVsync.map({ $0 > now }) ?? true { timeline.skipIdle(to: now) }
    }

    /// The arbiter's decision for the current links and caps: one ballot entry per
    /// distinct vote (``VoteTally``), not per link.
    private func arbitrate(cadences: inout CadenceTable?) -> Decision {
        decideGrid(tallyBallot(leaving: [:], moreVotes: 0), cadences: &cadences)
    }

    /// The grid's decision on `ballot` (every voting link's own vote).
    private func decideGrid(_ ballot: Arbiter.Ballot, cadences: inout CadenceTable?) -> Decision {
        markingBoost(arbiter.decide(ballot, cadences: &cadences) { link in links.slot(of: link).map { vote(of: links[$0]) } })
    }

    /// A ballot of the tally's entries, each less the links `leaving` lists under its key,
    /// with room for `moreVotes` votes added after. An entry costs O(``Decision/listLimit``)
    /// plus the links it loses: its lowest 16 that stay are found by skipping those.
    private func tallyBallot(leaving: [VoteTally.Key: Set<LinkID>], moreVotes: Int) -> Arbiter.Ballot {
        assert(tallyMatchesLinks(), "the vote tally is out of step with the links")
        assert(tickingMatchesLinks(), "the ticking divisors are out of step with the links")
        var ballot = Arbiter.Ballot(arbiter, caps: caps, expectedVotes: tally.entries.count + moreVotes)
        // By index: each entry is read in place (a `for entry in` copy retains and releases its members).
        for index in tally.entries.indices {
            let key = tally.entries[index].key
            guard let left = leaving[key] else {
                ballot.add(members: tally.entries[index].members, range: key.range, entitled: key.entitled, overrunCeiling: key.overrunCeiling)
                continue
            }
            var listed: [LinkID] = []
            listed.reserveCapacity(Decision.listLimit)
            for member in tally.entries[index].members where !left.contains(member) {
                listed.append(member)
                if listed.count == Decision.listLimit { break }
            }
            let staying = tally.entries[index].members.count - left.count
            ballot.add(listed: listed, unlisted: staying - listed.count, range: key.range, entitled: key.entitled, overrunCeiling: key.overrunCeiling)
        }
        return ballot
    }

    /// What link `link` votes, or `nil` when it does not (paused).
    private static func voteKey(of link: Link) -> VoteTally.Key? {
        guard !link.configuration.isPaused else { return nil }
        return VoteTally.Key(
            range: link.votedRange, entitled: link.configuration.hasHighFrameRateEntitlement, overrunCeiling: link.overrun?.ceiling
        )
    }

    /// Counts the link at `position` in the tally again, after a change to its vote (its
    /// range, pause, entitlement, boost or adaptive ceiling).
    private mutating func recountVote(at position: Int) {
        tally.set(links[position].id, to: Self.voteKey(of: links[position]))
    }

    /// Counts the link at `position` in ``ticking`` again, after a change to its cadence or pause.
    private mutating func recountTicking(at position: Int) {
        ticking.set(links[position].id, to: Self.tickingDivisor(of: links[position]))
    }

    /// The cadence divisor link `link` ticks at, or `nil` when it does not tick (paused).
    private static func tickingDivisor(of link: Link) -> Int? {
        link.configuration.isPaused ? nil : link.pacer.cadence.divisor
    }

    /// Whether ``ticking`` counts exactly the unpaused links' divisors: checked with the
    /// tally in debug builds (the tests).
    private func tickingMatchesLinks() -> Bool {
        var expected = TickingDivisors()
        for link in links { expected.set(link.id, to: Self.tickingDivisor(of: link)) }
        return expected == ticking
    }

    /// Whether the tally counts exactly the links' votes: checked before every
    /// arbitration in debug builds (the tests), where a change that forgot
    /// ``recountVote(at:)`` would otherwise arbitrate a stale vote.
    private func tallyMatchesLinks() -> Bool {
        var voting = 0
        for link in links {
            let key = Self.voteKey(of: link)
            guard tally.key(of: link.id) == key else { return false }
            if key != nil { voting += 1 }
        }
        // And each voting link is in its key's entry, once.
        let members = tally.entries.reduce(0) { $0 + $1.members.count }
        let filed = tally.entries.allSatisfy { entry in entry.members.allSatisfy { tally.key(of: $0) == entry.key } }
        return voting == tally.count && members == voting && filed
    }

    /// `decision` with ``Decision/boosted`` set when one of its listed deciders is boosted.
    /// O(listed deciders), and nothing without a boost in force.
    private func markingBoost(_ decision: Decision) -> Decision {
        guard !boostEnds.isEmpty, decision.deciders.contains(where: { boostEnds[$0] != nil }) else { return decision }
        var marked = decision
        marked.boosted = true
        return marked
    }

    /// Re-arbitrates at `now`: the governor learns the decision, and a decision at the
    /// rate in force takes over its residency now; one that changes the rate takes over
    /// when the change is applied at a vsync; until then the previous holders keep it (an
    /// increase's wait for the next vsync, a decrease's dwell), except when no link votes
    /// any more: then the idle timeout is what holds the rate.
    /// Residency is the panel's: it follows the panel arbitration (the grid's when no
    /// content-velocity report is in force).
    private mutating func rearbitrate(at now: C.Instant) {
        rearbitrations &+= 1
        var table = cadences.take()
        var panelTable = panelCadences.take()
        let (decision, panelDecision) = arbitrateGridAndPanel(grid: &table, panel: &panelTable)
        cadences = table
        panelCadences = panelTable
        governor.observe(decision, at: now)
        panel.observe(panelDecision, at: now)
        if FrameRateMath.equal(panelDecision.rate, panelRate) || panelDecision.rule == .idle {
            holdResidency(panelDecision, rate: panelRate, at: origin.duration(to: now))
        }
    }

    /// Credits the display's time at `rate` from `time` on to `decision`'s holders.
    private mutating func holdResidency(_ decision: Decision, rate: Double, at time: Duration) {
        var holders: [ResidencyHolder]
        if !decision.deciders.isEmpty {
            holders = decision.deciders.map { .link($0) }
        } else {
            switch decision.rule {
            case .cap: holders = [.cap]
            case .idle: holders = [.idle]
            default: holders = [.lowest]
            }
        }
        let links = self.links
        residency.hold(rate: rate, holders: holders, at: time) { link in
            links.slot(of: link).map { (links[$0].owner, links[$0].configuration.label) }
        }
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
        let (arbiter, caps) = (self.arbiter, self.caps)
        for slot in links.order {
            let index = Int(slot)
            links[index].pacer.setCadence(Self.cadence(of: links[index], refresh: refresh, arbiter: arbiter, caps: caps))
            recountTicking(at: index)
        }
    }

    /// The next vsync instant: when the driver should call ``vsync(at:canDeliver:)``.
    var nextVsync: C.Instant { timeline.next.instant }

    /// The first vsync from ``nextVsync`` on at which something happens: an unpaused link's
    /// interval starts, or the governor applies a rate change. `nil` when nothing will
    /// until a link or the caps change: the driver then need not wake for this display.
    /// Skipping the vsyncs before it is exact: at them no link ticks and the rate holds.
    var nextEventfulVsync: C.Instant? {
        withUnsafePointer(to: self) { Self.nextEventfulVsync(of: $0) }
    }

    /// ``nextEventfulVsync`` of the display at `display`, which reads each stored field it
    /// needs on its own. The tick plane asks it of every display three times a vsync, from
    /// the compositor's array. Through the property, each time copied the whole display out
    /// of the array and destroyed the copy after, because the optimizer cannot borrow an
    /// array element across the calls the computation makes (duration arithmetic): about
    /// 2,500 instructions each, 7,700 of a 10-link vsync's 39,800 (`framebench tick-cost`
    /// under callgrind).
    static func nextEventfulVsync(of display: UnsafePointer<Display>) -> C.Instant? {
        let timeline = display.pointee.timeline
        let next = timeline.next
        let origin = display.pointee.origin
        var earliest = changeIndex(
            to: display.pointee.governor.target?.rate, from: display.pointee.governor.currentRate,
            deadline: display.pointee.governor.pendingDecreaseDeadline, on: timeline
        )
        for frame in display.pointee.pendingFrames.values {
            earliest = earlier(earliest, timeline.firstVsyncIndex(atOrAfter: frame.notBefore - PendingFrame.slack, since: origin))
        }
        if let end = firstEnd(of: display.pointee.boostEnds) {
            earliest = earlier(earliest, timeline.firstVsyncIndex(atOrAfter: end, since: origin))
        }
        let panelChange = changeIndex(
            to: display.pointee.panel.target?.rate, from: display.pointee.panel.currentRate,
            deadline: display.pointee.panel.pendingDecreaseDeadline, on: timeline
        )
        if let panelChange { earliest = earlier(earliest, panelChange) }
        if let end = firstEnd(of: display.pointee.velocityExpiries) {
            earliest = earlier(earliest, timeline.firstVsyncIndex(atOrAfter: end, since: origin))
        }
        if let due = display.pointee.ticking.firstTick(atOrAfter: next.index) { earliest = earlier(earliest, due) }
        return earliest.map { timeline.vsync(index: $0).instant }
    }

    /// The first vsync index from `timeline`'s next on at which a governor at rate
    /// `current` (Hz) applies the change to `target` it decided, if it decided one: the next
    /// vsync for an increase, the first at or after `deadline` (the decrease dwell's end)
    /// for a decrease.
    private static func changeIndex(
        to target: Double?, from current: Double, deadline: @autoclosure () -> C.Instant?, on timeline: VsyncTimeline<C.Instant>
    ) -> UInt64? {
        guard let target, !FrameRateMath.equal(target, current) else { return nil }
        if target > current { return timeline.next.index }
        return deadline().map { timeline.firstVsync(atOrAfter: $0).index }
    }

    /// The earlier of vsync index `earliest` (`nil`: none yet) and `due`.
    private static func earlier(_ earliest: UInt64?, _ due: UInt64) -> UInt64 {
        earliest.map { Swift.min($0, due) } ?? due
    }

    /// A decided decrease due at a vsync that a late wake-up passed over (`now` is a whole
    /// period or more after it) is applied at that vsync, and the new grid starts there,
    /// as the ticks' timelines promised (``pendingChangeVsync()``); applied at the vsync
    /// processed instead, it moved the whole new grid by up to a period, and no tick's
    /// `skipped` said so. Residency changes hands at that vsync too. Nothing is applied
    /// early when a boost's end or a velocity report's expiry (vsync indices `boostDue`,
    /// `velocityDue`), which re-arbitrate, are due at or before it: then the change is
    /// taken at the processed vsync, as before.
    /// - Returns: when the timeline moved to that vsync, the vsync, the change applied there
    ///   and the vsyncs missed before it.
    private mutating func applyDecreasePassedOver(before now: C.Instant, unlessDue boostDue: UInt64?, _ velocityDue: UInt64?) -> (
        vsync: VsyncTimeline<C.Instant>.Vsync, change: RefreshRateChange?, missed: UInt64
    )? {
        // On time (the usual case, every vsync): nothing was passed over, so nothing to look up.
        guard timeline.next.instant.advanced(by: timeline.period) <= now, let due = pendingChangeVsync(), due.index > timeline.last.index,
            timeline.vsync(index: due.index).instant.advanced(by: timeline.period) <= now,
            boostDue.map({ $0 > due.index }) ?? true, velocityDue.map({ $0 > due.index }) ?? true
        else { return nil }
        let (passed, missed) = timeline.advance(toIndex: due.index)
        let change = governor.vsync(at: passed.instant)
        if let change {
            moveGrid(to: change.to)
            if let holding = panel.target { holdResidency(holding, rate: panelRate, at: origin.duration(to: passed.instant)) }
        }
        return (passed, change, missed)
    }

    /// Moves the vsync grid to `rate` (Hz) from the vsync just processed on, and every
    /// link's cadence with it.
    private mutating func moveGrid(to rate: Double) {
        timeline.changeRate(to: rate)
        recomputeCadences()
    }

    /// The vsync indices at which the earliest boost end and the earliest velocity
    /// report's expiry are processed on the current grid (an end between two vsyncs is
    /// processed at the first one after it, as ``nextEventfulVsync`` schedules it), with
    /// their times since the origin.
    private func dueReArbitrations() -> (boost: (end: Duration, due: UInt64)?, velocity: (end: Duration, due: UInt64)?) {
        (
            earliestBoostEnd.map { ($0, timeline.firstVsyncIndex(atOrAfter: $0, since: origin)) },
            earliestVelocityExpiry.map { ($0, timeline.firstVsyncIndex(atOrAfter: $0, since: origin)) }
        )
    }

    /// Processes the vsync due at or before `now`.
    mutating func vsync(at now: C.Instant, canDeliver: (OwnerID) -> Bool) -> VsyncReport<C.Instant> {
        var (boostDue, velocityDue) = dueReArbitrations()
        let passedChange = applyDecreasePassedOver(before: now, unlessDue: boostDue?.due, velocityDue?.due)
        if passedChange?.change != nil {
            // Both came after the change's vsync; where they fall is on the new grid now.
            (boostDue, velocityDue) = dueReArbitrations()
        }
        let vsync: VsyncTimeline<C.Instant>.Vsync
        let missed: UInt64
        if let passedChange, timeline.next.instant > now {
            // The change's own vsync is the latest at or before `now` on the new grid.
            (vsync, missed) = (passedChange.vsync, passedChange.missed)
        } else {
            let (after, missedAfter) = timeline.advance(to: now)
            (vsync, missed) = (after, passedChange.map { $0.missed + 1 + missedAfter } ?? missedAfter)
        }
        // A boost ending at or before this vsync re-arbitrates first, at its own end.
        if let (end, due) = boostDue, due <= vsync.index { expireBoosts(through: Swift.max(vsync.instant, origin.advanced(by: end))) }
        if let (end, due) = velocityDue, due <= vsync.index {
            expireVelocities(through: Swift.max(vsync.instant, origin.advanced(by: end)))
        }
        let change = governor.vsync(at: vsync.instant)
        let panelChange = panel.vsync(at: vsync.instant)
        let time = origin.duration(to: vsync.instant)
        if let change { moveGrid(to: change.to) }
        if change != nil || panelChange != nil, let holding = panelChange?.decision ?? panel.target {
            holdResidency(holding, rate: panelRate, at: time)
        }
        let presentations = pendingFrames.isEmpty ? [] : showFrames(at: time, vsync: vsync.instant)
        let refresh = refreshRate
        let period = timeline.period
        // Ticks carry the panel's rate and period; their timestamps stay on the grid.
        let panelRate = self.panelRate
        let panelPeriod = FrameRateMath.equal(panelRate, refresh) ? period : VsyncTimeline<C.Instant>.period(of: panelRate)
        var ticks: [Tick<C.Instant>] = []
        ticks.reserveCapacity(links.count)
        // Every link with one divisor shares its target and callback rate: computed once per divisor.
        var lastDivisor = 0
        var target = vsync.instant
        var targetSinceOrigin = time
        var schedule = FrameSchedule(tick: .init(anchor: vsync.index, time: time, period: period, divisor: 1))
        // The ticks of links that list frames, which get their schedule after the pass: it
        // reads the display (the decided rate change, the caps) while the pass writes its links.
        var scheduled: [(tick: Int, link: Int, schedule: FrameSchedule)] = []
        var heldBack: [HeldBackLink] = []
        var resumed: [ResumedLink] = []
        // The pacers compare in whole nanoseconds: converted once for every link.
        let pacingTime = LinkPacer.VsyncTime(time: time, period: period)
        let pacingOrigin = origin
        // The links are walked through their slots' buffer: each write to a link in place (its
        // pacer, its ring of delivered ticks) took a uniqueness check of the array. The pass touches
        // nothing else of the display (the compiler holds it to that).
        self.links.withUnsafeMutableSlots { slots, order in
            for slot in order where !slots[Int(slot)].configuration.isPaused {
                let index = Int(slot)
                let owner = slots[index].owner
                // A reported wait ends with this vsync's tick, if it delivers one: for which tick, since when.
                let reportedWait =
                    slots[index].pacer.heldBackReported ? (awaited: slots[index].pacer.lastDelivered, since: slots[index].pacer.lastDeliveredTime) : nil
                let outcome = slots[index].pacer.vsync(index: vsync.index, at: pacingTime, canDeliver: canDeliver(owner))
                guard case .deliver(let sequence, let skipped) = outcome else {
                    if outcome == .skipped, let held = slots[index].pacer.noteHeldBack(at: time) {
                        heldBack.append(HeldBackLink(link: slots[index].id, owner: owner, frame: held.frame, waited: held.waited))
                    }
                    continue
                }
                if let reportedWait {
                    resumed.append(
                        ResumedLink(
                            link: slots[index].id, owner: owner, awaited: reportedWait.awaited, sequence: sequence, waited: time - reportedWait.since
                        ))
                }
                let cadence = slots[index].pacer.cadence
                if cadence.divisor != lastDivisor {
                    lastDivisor = cadence.divisor
                    target = vsync.instant.advanced(by: FrameRateMath.times(period, cadence.divisor))
                    targetSinceOrigin = pacingOrigin.duration(to: target)
                    schedule = FrameSchedule(tick: .init(anchor: vsync.index, time: time, period: period, divisor: cadence.divisor))
                }
                var tick = Tick(
                    link: slots[index].id, owner: owner, sequence: sequence, timestamp: vsync.instant, targetTimestamp: target,
                    duration: panelPeriod, refreshRate: panelRate, callbackRate: cadence.callbackRate, skipped: skipped
                )
                if slots[index].boost != nil { tick.boosted = true }
                if slots[index].configuration.needsFrameSchedule {
                    scheduled.append((ticks.count, index, schedule))
                } else {
                    slots[index].presentation.delivered(sequence: sequence, target: targetSinceOrigin, schedule: schedule)
                }
                ticks.append(tick)
            }
        }
        if !scheduled.isEmpty {
            let change = pendingChangeVsync()
            for (tick, link, schedule) in scheduled {
                frameTiming(of: links[link], schedule: schedule, change: change, into: &ticks[tick])
                links[link].presentation.delivered(
                    sequence: ticks[tick].sequence, target: origin.duration(to: ticks[tick].targetPresentationTimestamp),
                    schedule: ticks[tick].schedule, latency: ticks[tick].frameLatency
                )
            }
        }
        return VsyncReport(
            display: id, vsync: vsync.instant, index: vsync.index, missedVsyncs: missed,
            rateChange: change ?? passedChange?.change, rateChangeVsync: change == nil ? passedChange?.vsync.instant : nil,
            passedOverChange: change == nil ? nil : passedChange.flatMap { passed in passed.change.map { ($0, passed.vsync.instant) } },
            panelChange: panelChange, ticks: ticks, presentations: presentations, nextVsync: timeline.next.instant,
            heldBack: heldBack, resumed: resumed
        )
    }

    /// The links whose wait for a frame was reported (``HeldBackLink``) and goes on, with
    /// the tick each waits for.
    var reportedWaits: [(link: LinkID, awaited: UInt64)] {
        links.filter { $0.pacer.heldBackReported }.map { ($0.id, $0.pacer.lastDelivered) }
    }

    func snapshot(of id: LinkID, at now: Duration? = nil) -> LinkSnapshot? {
        guard let link = link(id) else { return nil }
        return linkSnapshot(link, at: now)
    }

    /// The latest time the display heard of (when no `now` is given): residency's mark.
    private var latestTime: Duration { residency.mark }

    private func linkSnapshot(_ link: Link, at now: Duration?) -> LinkSnapshot {
        LinkSnapshot(
            link: link.id, owner: link.owner, configuration: link.configuration,
            effectiveRange: effectiveRange(of: link),
            callbackRate: link.pacer.cadence.callbackRate, since: link.since, limit: limit(of: link),
            hitches: link.presentation.hasPresented
                ? link.presentation.hitches.summary(at: now ?? link.presentation.hitches.latest) : nil,
            boostedUntil: link.boost?.end, awaitedFrame: link.configuration.isPaused ? nil : link.pacer.awaitedFrame
        )
    }

    var snapshot: DisplaySnapshot { snapshot(at: nil) }

    /// The display's view at `now` (since the origin; `nil`: as of the latest time it heard
    /// of), with residency and hitch ratios up to then.
    func snapshot(at now: Duration?) -> DisplaySnapshot {
        let refresh = refreshRate
        let decision = self.decision
        var prefix = ""
        if let pending = decision.pending {
            prefix = "moving to \(FrameRateMath.format(pending.rate)) Hz"
                + (pending.rate > refresh
                    ? " at the next vsync"
                    : decision.rule == .idle ? " once the idle timeout and the decrease dwell pass" : " after the decrease dwell")
                + ": "
        }
        return DisplaySnapshot(
            id: id, profile: arbiter.profile, refreshRate: refresh, reasonPrefix: prefix,
            targetRate: decision.rate, panelRate: panelRate, panelDecision: panelDecision, caps: caps, links: links.map { linkSnapshot($0, at: now) }, decision: decision,
            residency: residency.entries(at: now ?? latestTime)
        )
    }
}

// MARK: - Panel rate from content velocity (issue 13 §2; docs/arbitration.md)

extension Display {
    /// Records `link`'s `contentVelocity` report (points/s, finite, `>= 0`) made at `now`:
    /// its panel vote until the report expires ``ContentVelocityTable/reportLifetime``
    /// later. On a profile without a velocity table the report is accepted and ignored.
    /// Re-arbitrates only when the report moves the link to another table rate (or is
    /// its first), so a report per frame costs O(1) while the band holds.
    /// - Returns: whether the panel arbitration ran again (its target may have changed).
    mutating func reportVelocity(_ id: LinkID, velocity: Double, at now: C.Instant) -> Bool {
        guard let table = arbiter.profile.velocityTable, velocity.isFinite, velocity >= 0 else { return false }
        catchUp(to: now)
        guard let position = links.slot(of: id) else { return false }
        let time = origin.duration(to: now)
        let rate = table.rate(for: velocity)
        let previous = links[position].velocity
        let report = ContentVelocityReport(velocity: velocity, rate: rate, expires: time + ContentVelocityTable.reportLifetime)
        links[position].velocity = report
        velocityExpiries[id] = report.expires
        guard previous.map({ !FrameRateMath.equal($0.rate, rate) }) ?? true else { return false }
        rearbitrate(at: now)
        return true
    }

    /// The earliest expiry of a velocity report in force, as the time since the display's origin.
    private var earliestVelocityExpiry: Duration? { Self.firstEnd(of: velocityExpiries) }

    /// The earliest of `ends` (boost ends or velocity expiries, since the display's origin).
    private static func firstEnd(of ends: [LinkID: Duration]) -> Duration? { ends.values.min() }

    /// Ends every velocity report that expired at or before `now`, in order of expiry; the
    /// reports that expire before the same vsync end together, re-arbitrating once, at the
    /// last of their expiries (the panel's dwell counts from there; see ``expireBoosts(through:)``).
    private mutating func expireVelocities(through now: C.Instant) {
        let time = origin.duration(to: now)
        guard let earliest = earliestVelocityExpiry, earliest <= time else { return }
        let expired = velocityExpiries.filter { $0.value <= time }.sorted { $0.value < $1.value }
        for group in groupedByVsync(expired) {
            for (id, _) in expired[group] {
                velocityExpiries[id] = nil
                if let index = links.slot(of: id) { links[index].velocity = nil }
            }
            rearbitrate(at: origin.advanced(by: expired[group.upperBound - 1].value))
        }
    }

    /// The grid's decision and the panel's. The panel's is the grid's itself when no
    /// voting link has a velocity report in force; else the same ballot, except that
    /// each unboosted link with a report votes its table rate as `{rate, rate, rate}`,
    /// never above its own maximum (its minimum is for its callbacks, which stay on the
    /// grid: the field study's 120-120-120 animation ran the panel at 60 Hz), under its
    /// entitlement, caps and adaptive ceiling as any vote. A boost holds the panel too: a
    /// boosted link votes its boost range. A link whose table rate is below what it would
    /// have otherwise is listed as limited `by: velocity`, with the velocity that decided.
    ///
    /// The tally is counted once for both: its entries less the reporting links make one
    /// ballot, which each arbitration completes with those links' own votes. Counting
    /// costs O(distinct votes + reports), not O(links), and is not done twice.
    private func arbitrateGridAndPanel(grid gridCadences: inout CadenceTable?, panel panelCadences: inout CadenceTable?) -> (grid: Decision, panel: Decision) {
        // The voting links whose panel vote differs from their grid vote, by their tally entry.
        var reporting: [VoteTally.Key: Set<LinkID>] = [:]
        var reportingCount = 0
        for id in velocityExpiries.keys {
            guard let key = tally.key(of: id), let position = links.slot(of: id), links[position].boost == nil else { continue }
            reporting[key, default: []].insert(id)
            reportingCount += 1
        }
        guard reportingCount > 0 else {
            let grid = arbitrate(cadences: &gridCadences)
            return (grid, grid)
        }
        let others = tallyBallot(leaving: reporting, moreVotes: reportingCount)
        var gridBallot = others
        var panelBallot = others
        // In any order: a count does not depend on the order of its votes (the groups are
        // decided lowest link first, and each list keeps the lowest links).
        for (key, ids) in reporting {
            for id in ids {
                let link = links[links.slot(of: id)!]
                gridBallot.add(link: id, range: key.range, entitled: key.entitled, overrunCeiling: key.overrunCeiling)
                let (range, velocity) = panelRange(of: link)
                panelBallot.add(link: id, range: range, entitled: key.entitled, overrunCeiling: key.overrunCeiling)
                guard let velocity else { continue }
                // What the link's ordinary vote asks of the panel, under its ceilings.
                let rate = range.maximum
                let effective = effectiveRange(of: link)
                let ordinary = effective.hasPreferredRate ? effective.preferred : effective.maximum
                if rate < ordinary && !FrameRateMath.equal(rate, ordinary) {
                    var limit = LinkLimit(link: id, by: .velocity, wanted: ordinary, got: rate)
                    limit.contentVelocity = velocity
                    panelBallot.note(limit)
                }
            }
        }
        let grid = decideGrid(gridBallot, cadences: &gridCadences)
        let panel = markingBoost(arbiter.decide(panelBallot, cadences: &panelCadences) { link in links.slot(of: link).map { panelVote(of: links[$0]) } })
        return (grid, panel)
    }

    /// The range `link` votes in the panel arbitration, and the velocity (points/s) that
    /// set it: its table rate as `{rate, rate, rate}` (never above its own maximum) while it
    /// has a velocity report in force and no boost; else its voted range and `nil`.
    private func panelRange(of link: Link) -> (FrameRateRange, velocity: Double?) {
        guard let report = link.velocity, link.boost == nil else { return (link.votedRange, nil) }
        let rate = Swift.min(report.rate, link.votedRange.maximum)
        return (FrameRateRange(uncheckedMinimum: rate, maximum: rate, preferred: rate), report.velocity)
    }

    /// What `link` votes in the panel arbitration, named in its reasons (``panelRange(of:)``).
    private func panelVote(of link: Link) -> LinkVote {
        let (range, velocity) = panelRange(of: link)
        guard let velocity else { return vote(of: link) }
        var vote = LinkVote(
            link: link.id, range: range, hasHighFrameRateEntitlement: link.configuration.hasHighFrameRateEntitlement,
            label: link.configuration.label
        )
        vote.contentVelocity = velocity
        return vote
    }
}

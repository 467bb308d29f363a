/// The simulated compositor: every display, every display link, and the rules
/// that turn links' hints into refresh rates and ticks.
///
/// A pure state machine over clock `C`'s instants: it performs no I/O and never
/// reads a clock. Callers pass `now` to every operation and perform what it
/// returns: deliver ``VsyncReport/ticks``, wake at ``nextVsync(of:)``.
/// Links belong to an ``OwnerID``; an owner can only touch its own links.
public struct Compositor<C: Clock>: Sendable where C.Duration == Duration {
    var displays: [Display<C>]
    var displayOfLink: [LinkID: Int] = [:]
    /// Each owner's links, in registration order: the one map of who holds what.
    var linksOfOwner: [OwnerID: [LinkID]] = [:]
    var lastLinkID: UInt64 = 0

    /// Builds a compositor whose displays' first vsync is at `start`.
    /// - Precondition: at least one display, with distinct ids.
    public init(
        displays configurations: [DisplayConfiguration],
        governor: RefreshRateGovernor<C>.Settings = .init(),
        start: C.Instant
    ) {
        precondition(!configurations.isEmpty, "a compositor needs at least one display")
        precondition(Set(configurations.map(\.id)).count == configurations.count, "display ids must be distinct")
        self.displays = configurations.map { Display(configuration: $0, governor: governor, start: start) }
    }

    /// Every display's id, in configuration order. The first is the default display.
    public var displayIDs: [DisplayID] { displays.map { $0.id } }  // not `map(\.id)`: a key path is built at run time on every call (the tick plane asks per vsync)

    /// The number of links on every display.
    public var linkCount: Int { displayOfLink.count }

    /// The links whose wait for a frame was reported in a ``VsyncReport/heldBack`` and goes
    /// on (also after a handover, which keeps that), with the sequence of the tick each waits for.
    public var reportedWaits: [(link: LinkID, awaited: UInt64)] { displays.flatMap(\.reportedWaits) }

    func index(of display: DisplayID?) throws(CompositorError) -> Int {
        guard let display else { return 0 }
        guard let index = displays.firstIndex(where: { $0.id == display }) else {
            throw .unknownDisplay(display, known: displayIDs)
        }
        return index
    }

    func index(of link: LinkID, owner: OwnerID) throws(CompositorError) -> Int {
        guard let index = displayOfLink[link], displays[index].link(link)?.owner == owner else { throw .linkNotFound(link) }
        return index
    }

    /// Registers a new link for `owner` on `display` (the default display when `nil`).
    public mutating func register(
        owner: OwnerID, display: DisplayID? = nil, configuration: DisplayLinkConfiguration, at now: C.Instant
    ) throws(CompositorError) -> LinkStatus {
        let index = try index(of: display)
        lastLinkID += 1
        let link = LinkID(rawValue: lastLinkID)
        displays[index].add(link, owner: owner, configuration: configuration, at: now)
        displayOfLink[link] = index
        linksOfOwner[owner, default: []].append(link)
        return displays[index].status(of: link)!
    }

    /// Changes a link's range and/or paused flag. A resumed link starts afresh: no skips reported for the pause.
    public mutating func update(
        link: LinkID, owner: OwnerID, range: FrameRateRange? = nil, paused: Bool? = nil, adaptive: Bool? = nil, at now: C.Instant
    ) throws(CompositorError) -> LinkStatus {
        let index = try index(of: link, owner: owner)
        displays[index].update(link, range: range, paused: paused, adaptive: adaptive, at: now)
        return displays[index].status(of: link)!
    }

    /// Sets a link's number of frame timelines (`timelines`, in ``DisplayLinkConfiguration/timelineRange``)
    /// and frame latency (`preferredFrameLatency`, in ``DisplayLinkConfiguration/frameLatencyRange``),
    /// each when not `nil`, from its next tick on. Neither changes arbitration.
    public mutating func setFrameTiming(link: LinkID, owner: OwnerID, timelines: Int?, frameLatency: Int?) throws(CompositorError) {
        let index = try index(of: link, owner: owner)
        displays[index].setFrameTiming(
            link, timelines: timelines.map { min(max($0, DisplayLinkConfiguration.timelineRange.lowerBound), DisplayLinkConfiguration.timelineRange.upperBound) },
            frameLatency: frameLatency.map { min(max($0, DisplayLinkConfiguration.frameLatencyRange.lowerBound), DisplayLinkConfiguration.frameLatencyRange.upperBound) }
        )
    }

    /// Removes a link (`CADisplayLink.invalidate()`).
    public mutating func invalidate(link: LinkID, owner: OwnerID, at now: C.Instant) throws(CompositorError) {
        let index = try index(of: link, owner: owner)
        displays[index].remove(link, at: now)
        displayOfLink[link] = nil
        linksOfOwner[owner]?.removeAll { $0 == link }
        if linksOfOwner[owner]?.isEmpty == true { linksOfOwner[owner] = nil }
    }

    /// Removes every link `owner` holds (its connection closed), re-arbitrating each display once.
    /// - Returns: the removed links.
    ///
    /// Costs O(the owner's links + the links on each display they are on), the latter a pass
    /// over 4-byte slot numbers: closing thousands of connections at once stays cheap.
    public mutating func removeLinks(of owner: OwnerID, at now: C.Instant) -> [LinkID] {
        guard let owned = linksOfOwner.removeValue(forKey: owner) else { return [] }
        var onDisplay = Array(repeating: [LinkID](), count: displays.count)
        for link in owned {
            if let index = displayOfLink[link] { onDisplay[index].append(link) }
        }
        var removed: [LinkID] = []
        for index in displays.indices where !onDisplay[index].isEmpty {
            removed += displays[index].remove(onDisplay[index], at: now)
        }
        for link in removed { displayOfLink[link] = nil }
        return removed
    }

    /// Records that `owner`'s client finished the frame for tick `sequence` of `link`.
    public mutating func frameDone(link: LinkID, owner: OwnerID, sequence: UInt64) throws(CompositorError) {
        let index = try index(of: link, owner: owner)
        try displays[index].frameDone(link, sequence: sequence)
    }

    /// `Present`: `owner`'s client committed the frame for tick `sequence` of `link` at `now`.
    ///
    /// The frame shows at the first vsync of the link's display at or after the latest of
    /// `now`, `notBefore` (`present(at:)`) and the link's previous shown frame plus
    /// `minimumInterval` (`present(afterMinimumDuration:)`); that vsync's report lists it
    /// in ``VsyncReport/presentations``. A valid Present is also the frame-done report of
    /// ``frameFinished(link:owner:sequence:at:)``; a refused one changes nothing.
    ///
    /// The frame is expected at the tick's `targetPresentationTimestamp`, or, with `vsyncID`,
    /// at the presentation time of the tick's frame timeline with that vsync id (one of
    /// ``FrameSchedule/maximumFrames``); a frame aimed that way, or of a link with frame
    /// latency 2, is shown no earlier than its expected time. The hitch is measured from it.
    /// - Returns: the link's pending frame this one replaces (dropped), if any, and the
    ///   adaptive step the frame caused (``OverrunMonitor``), if any.
    @discardableResult
    public mutating func present(
        link: LinkID, owner: OwnerID, sequence: UInt64, notBefore: C.Instant? = nil, minimumInterval: Duration? = nil,
        vsyncID: UInt64? = nil, at now: C.Instant
    ) throws(CompositorError) -> (replaced: Presentation<C.Instant>?, step: OverrunMonitor.Step?) {
        let index = try index(of: link, owner: owner)
        return try displays[index].present(
            link, sequence: sequence, notBefore: notBefore, minimumInterval: minimumInterval, vsyncID: vsyncID, at: now
        )
    }

    /// Records that `owner`'s client finished the frame for tick `sequence` of `link` at
    /// `now`, measuring its frame time from the tick (the one measurement `FrameDone` and
    /// `Present` both feed). For an adaptive link this may step it down or back up
    /// (``OverrunMonitor``), which re-arbitrates at `now`.
    /// - Returns: the adaptive step this frame caused, if any.
    @discardableResult
    public mutating func frameFinished(
        link: LinkID, owner: OwnerID, sequence: UInt64, at now: C.Instant
    ) throws(CompositorError) -> OverrunMonitor.Step? {
        let index = try index(of: link, owner: owner)
        return try displays[index].frameFinished(link, sequence: sequence, at: now)
    }

    /// Boosts `link` (``LinkBoost``): from `now` for `duration` (clamped to
    /// `0...LinkBoost.maximumDuration`), it votes `range`, or `{max, max, max}` of its own
    /// range when `nil`. A running boost's end only moves later. When the boost ends, the
    /// display re-arbitrates at that instant (at the last end, for boosts ending before the
    /// same vsync) and falls back through the decrease dwell.
    /// - Returns: the link's status and when its boost ends.
    public mutating func boost(
        link: LinkID, owner: OwnerID, duration: Duration, range: FrameRateRange? = nil, at now: C.Instant
    ) throws(CompositorError) -> (status: LinkStatus, boostedUntil: C.Instant) {
        let index = try index(of: link, owner: owner)
        guard let end = displays[index].boost(link, range: range, duration: duration, at: now) else { throw .linkNotFound(link) }
        return (displays[index].status(of: link)!, displays[index].origin.advanced(by: end))
    }

    /// The owner of `link`, if it exists.
    public func owner(of link: LinkID) -> OwnerID? {
        displayOfLink[link].flatMap { displays[$0].link(link)?.owner }
    }

    /// The caps of `display` (the default display when `nil`).
    public func caps(of display: DisplayID? = nil) throws(CompositorError) -> DisplayCaps {
        displays[try index(of: display)].caps
    }

    /// Replaces the caps of `display`, or of every display when `nil`, and re-arbitrates.
    /// - Returns: the displays changed, with their new caps.
    public mutating func setCaps(
        display: DisplayID?, at now: C.Instant, _ change: (inout DisplayCaps) -> Void
    ) throws(CompositorError) -> [(DisplayID, DisplayCaps)] {
        let targets = display == nil ? Array(displays.indices) : [try index(of: display)]
        return targets.map { index in
            var caps = displays[index].caps
            change(&caps)
            displays[index].setCaps(caps, at: now)
            return (displays[index].id, caps)
        }
    }

    /// The displays' first vsync: the instant ``LinkSnapshot/since`` and
    /// ``PendingRateChange/at`` are measured from.
    public var start: C.Instant { displays[0].origin }

    /// The instant `offset` after ``start``: turns ``LinkSnapshot/since`` and
    /// ``PendingRateChange/at`` into instants of the compositor's clock.
    public func instant(sinceStart offset: Duration) -> C.Instant { start.advanced(by: offset) }

    /// The latest decision of `display` (the default display when `nil`): the rate, the
    /// rule, who holds it, the cap, the limited links, and the pending change if any.
    public func decision(of display: DisplayID? = nil) throws(CompositorError) -> Decision {
        displays[try index(of: display)].decision
    }

    /// The refresh rate in force on `display`, in Hz.
    public func refreshRate(of display: DisplayID? = nil) throws(CompositorError) -> Double {
        displays[try index(of: display)].refreshRate
    }

    /// The number of links on `display` (the default display when `nil`), paused ones included.
    public func linkCount(of display: DisplayID? = nil) throws(CompositorError) -> Int {
        displays[try index(of: display)].links.count
    }

    /// The links `owner` holds, each with its display, in registration order.
    public func links(of owner: OwnerID) -> [(link: LinkID, display: DisplayID)] {
        (linksOfOwner[owner] ?? []).compactMap { link in displayOfLink[link].map { (link, displays[$0].id) } }
    }

    /// How many links `owner` holds.
    public func linkCount(of owner: OwnerID) -> Int { linksOfOwner[owner]?.count ?? 0 }

    /// The display a link is on, if the link exists.
    public func display(of link: LinkID) -> DisplayID? {
        displayOfLink[link].map { displays[$0].id }
    }

    /// When `display`'s next vsync is due: the driver's next wake-up.
    public func nextVsync(of display: DisplayID) throws(CompositorError) -> C.Instant {
        displays[try index(of: display)].nextVsync
    }

    /// The first vsync of `display` from ``nextVsync(of:)`` on at which a link ticks or the
    /// rate changes; `nil` when none will until the links or caps change. A driver that
    /// sleeps until then instead of waking every vsync delivers exactly the same ticks.
    public func nextEventfulVsync(of display: DisplayID) throws(CompositorError) -> C.Instant? {
        let position = try index(of: display)
        // Through the buffer: reading the element out of the array copied the whole display.
        return displays.withUnsafeBufferPointer { Display.nextEventfulVsync(of: $0.baseAddress! + position) }
    }

    /// The earliest of every display's ``nextEventfulVsync(of:)``; `nil` when no display
    /// has one: when the tick plane must wake next for the displays.
    public var earliestEventfulVsync: C.Instant? {
        displays.withUnsafeBufferPointer { displays in
            var earliest: C.Instant?
            for index in displays.indices {
                guard let next = Display.nextEventfulVsync(of: displays.baseAddress! + index) else { continue }
                if earliest.map({ next < $0 }) ?? true { earliest = next }
            }
            return earliest
        }
    }

    /// Processes `display`'s vsync due at or before `now`: applies a due rate change
    /// and returns the ticks to deliver. `canDeliver` says whether an owner can take
    /// a tick now; an owner that cannot has the interval counted as skipped.
    public mutating func vsync(
        of display: DisplayID, at now: C.Instant, canDeliver: (OwnerID) -> Bool = { _ in true }
    ) throws(CompositorError) -> VsyncReport<C.Instant> {
        let index = try index(of: display)
        return displays[index].vsync(at: now, canDeliver: canDeliver)
    }

    /// A read-only view of one link, if it exists.
    public func snapshot(of link: LinkID) -> LinkSnapshot? {
        displayOfLink[link].flatMap { displays[$0].snapshot(of: link) }
    }

    /// A read-only view of every display, for status output; residency and hitch ratios
    /// as of the latest time each display heard of.
    public var snapshot: [DisplaySnapshot] { displays.map(\.snapshot) }

    /// The owners whose links some display's residency still credits by name (the identity
    /// a closed connection must keep for them), without building a snapshot.
    public var ownersNamedByResidency: Set<OwnerID> {
        displays.reduce(into: []) { $0.formUnion($1.residency.namedOwners) }
    }

    /// Every display as of `now`: residency counts up to `now`, hitch ratios are over the
    /// window ending at `now`.
    public func snapshot(at now: C.Instant) -> [DisplaySnapshot] {
        displays.map { $0.snapshot(at: $0.origin.duration(to: now)) }
    }

    /// One link as of `now`, if it exists.
    public func snapshot(of link: LinkID, at now: C.Instant) -> LinkSnapshot? {
        displayOfLink[link].flatMap { displays[$0].snapshot(of: link, at: displays[$0].origin.duration(to: now)) }
    }
}

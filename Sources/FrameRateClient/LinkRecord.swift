import FrameRateModel
import FrameRateProtocol
import Synchronization

/// What the client knows about one of its links, shared by its
/// ``DisplayLinkHandle``, the connection's ``StreamRegistry`` and whichever
/// router currently routes it: the registration as it stands now (range and
/// paused flag after every update, so a reconnect can register it again), the
/// latest status, its application-visible id, where it lives on the daemon,
/// how its ticks are renumbered (``TickSequencer``), and how it ended.
///
/// The tick stream's continuation lives here, so it outlives any one connection.
final class LinkRecord: Sendable {
    /// The mutable part.
    struct State: Sendable {
        /// The request that would register the link as it stands now.
        var registration: RegisterRequest
        /// The latest Register or Update result.
        var status: LinkStatusResult?
        /// How the link ended, once it has.
        var end: DisplayLinkEnd?
        /// The application-visible id, fixed at the first registration.
        var id: LinkID?
        /// Where the link lives on the daemon now.
        var attachment: StreamAttachment<LinkID> = .detached
        /// The tick renumbering across re-registrations.
        var sequencer = TickSequencer()
    }

    /// The link's tick stream.
    let ticks: AsyncStream<TickNotification>.Continuation
    /// The link's `Presented` notifications.
    let presented: AsyncStream<PresentedNotification>.Continuation
    /// The connection's live links, which this record leaves when it ends.
    let registry: StreamRegistry
    private let state: Mutex<State>

    /// A record for a registration about to be sent.
    init(
        registration: RegisterRequest, ticks: AsyncStream<TickNotification>.Continuation,
        presented: AsyncStream<PresentedNotification>.Continuation = AsyncStream.makeStream(of: PresentedNotification.self).continuation,
        registry: StreamRegistry
    ) {
        self.ticks = ticks
        self.presented = presented
        self.registry = registry
        self.state = Mutex(State(registration: registration))
    }

    /// A copy of the current state.
    var snapshot: State { state.withLock { $0 } }

    /// The router and daemon-side id, while the link is attached and live.
    var target: (router: ClientRouter, id: LinkID)? {
        state.withLock { $0.end == nil ? $0.attachment.target : nil }
    }

    /// A Register for this link was answered with `daemonID` on `router`'s
    /// connection: from now on `router` routes its ticks. The first attachment
    /// fixes the application-visible id (the daemon's, unless a live link of the
    /// connection already has it). Returns `false`, attaching nothing, when the
    /// link has ended meanwhile (the caller must release `daemonID`).
    func attach(router: ClientRouter, daemonID: LinkID) -> Bool {
        guard let existing = state.withLock({ $0.end == nil ? Optional($0.id) : nil }) else { return false }
        let id = existing ?? registry.claimLink(self, preferred: daemonID)
        let attached = state.withLock { state in
            guard state.end == nil else { return false }
            state.id = id
            state.attachment = .attached(router, daemonID)
            return true
        }
        if !attached { registry.removeLink(id, self) }
        return attached
    }

    /// The connection the link lived on is going away (the daemon sent `Closed`
    /// UNAVAILABLE); it will be registered again once a new connection is up.
    func detach() {
        state.withLock { $0.attachment = .detached }
    }

    /// Starts registering the link again on `router`'s connection: returns the
    /// request to send, or `nil` when the link has ended or is already on that connection.
    func beginReregistering(on router: ClientRouter) -> RegisterRequest? {
        state.withLock { state in
            guard state.end == nil, !state.attachment.isOn(router) else { return nil }
            state.attachment = .registering(router)
            state.sequencer.reregistering(paused: state.registration.paused)
            return state.registration
        }
    }

    /// Delivers a tick from the daemon to the application, renumbered (see ``TickSequencer``).
    func deliver(_ tick: TickNotification) {
        let mapped: TickNotification? = state.withLock { state in
            guard state.end == nil, let id = state.id else { return nil }
            let numbers = state.sequencer.map(
                sequence: tick.sequence, timestamp: tick.timestamp, callbackRate: tick.callbackRate, skipped: tick.skipped
            )
            var mapped = tick
            mapped.link = id
            mapped.sequence = numbers.sequence
            mapped.skipped = numbers.skipped
            return mapped
        }
        if let mapped { ticks.yield(mapped) }
    }

    /// Delivers a `Presented` from the daemon, with the link's application-visible id and
    /// the tick's sequence in the application's numbering (the same offset as its ticks).
    func deliver(_ frame: PresentedNotification) {
        let mapped: PresentedNotification? = state.withLock { state in
            guard state.end == nil, let id = state.id else { return nil }
            var mapped = frame
            mapped.link = id
            let sequencer = state.sequencer
            mapped.sequence = frame.sequence >= sequencer.daemonBase
                ? sequencer.applicationBase &+ (frame.sequence - sequencer.daemonBase) : sequencer.applicationBase
            return mapped
        }
        if let mapped { presented.yield(mapped) }
    }

    /// The daemon's sequence for the application's `sequence`.
    func daemonSequence(for sequence: UInt64) -> UInt64 {
        state.withLock { $0.sequencer.daemonSequence(forApplicationSequence: sequence) }
    }

    /// Records a successful Register or Update; `range` and `paused` are what the
    /// update changed. Returns `status` with the application-visible link id.
    @discardableResult
    func didUpdate(status: LinkStatusResult, range: FrameRateRange?, paused: Bool?, adaptive: Bool? = nil) -> LinkStatusResult {
        state.withLock { state in
            if let range { state.registration.range = range }
            // The daemon echoes the frame timing in force: a reconnect registers the link with it.
            if let timelines = status.timelines { state.registration.timelines = timelines }
            if let latency = status.preferredFrameLatency { state.registration.preferredFrameLatency = latency }
            if let adaptive { state.registration.adaptive = adaptive }
            if let paused {
                state.registration.paused = paused
                if paused { state.sequencer.paused() }
            }
            var status = status
            status.link = state.id ?? status.link
            state.status = status
            return status
        }
    }

    /// Ends the link: records `end` (the first end wins), leaves the registry and
    /// finishes the tick stream. Returns whether this call ended it.
    @discardableResult
    func finish(end: DisplayLinkEnd) -> Bool {
        let ended: (Bool, LinkID?) = state.withLock { state in
            guard state.end == nil else { return (false, nil) }
            state.end = end
            return (true, state.id)
        }
        if let id = ended.1 { registry.removeLink(id, self) }
        ticks.finish()
        presented.finish()
        return ended.0
    }
}

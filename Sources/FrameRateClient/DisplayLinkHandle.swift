public import FrameRateModel
public import FrameRateProtocol

/// A display link registered on a ``FrameRateConnection``: its ticks, and the
/// operations on it. Keeps its connection open while it exists.
///
/// The handle remembers the registration as it stands now (``registration``:
/// range and paused flag after every update), so the link can be registered
/// again on a new connection; a connection made with `reconnect:` does that by
/// itself after the daemon restarts, keeping this handle, its ``id`` and its
/// ``ticks`` stream. Dropping the handle does not invalidate the link;
/// ``invalidate()`` does, and so does closing the connection.
public final class DisplayLinkHandle: Sendable {
    /// The link's id as this application sees it: the daemon's id at
    /// registration, kept for the handle's life (also after a reconnect, when the
    /// new daemon knows the link by ``daemonID``). Ticks carry this id.
    public let id: LinkID
    /// The display it is on.
    public let display: DisplayID
    /// The refresh rate arbitration chose at registration, Hz.
    public let refreshRate: Double
    /// The link's callback rate at registration, Hz.
    public let callbackRate: Double
    /// The display's decision at registration: the rule, who holds the rate, the cap,
    /// the limited links and any pending change (`nil` from a daemon older than it).
    /// Link ids in it are the daemon's (``daemonID``).
    public let decision: DecisionState?
    /// How the entitlement or a cap limited the link at registration (`by`, `wanted`,
    /// `got` in Hz), or `nil` when it got what it asked for.
    public let limit: LinkLimit?
    /// The connection the link belongs to.
    public let connection: FrameRateConnection

    /// The link's ticks (`framerate.v1.DisplayLink/Tick`), in order; times are
    /// seconds on `CLOCK_MONOTONIC`.
    ///
    /// Buffering is bounded: the stream keeps only the newest
    /// `tickBufferLimit` undelivered ticks (see ``FrameRateConnection/register(_:tickBufferLimit:)``),
    /// so a consumer that falls behind loses the oldest ticks (visible as a jump
    /// in ``TickNotification/sequence``) and memory never grows. The stream
    /// finishes when the link ends; ``end`` says how. Iterate it from one task.
    ///
    /// After a reconnect the stream simply continues. Ticks carry ``id``, and
    /// `sequence` continues the application's numbering: the first tick after the
    /// link is registered again reports the outage as
    /// `skipped = max(1, round((timestamp − last.timestamp) · callbackRate) − 1)`
    /// (`last` is the last tick this stream delivered, `callbackRate` the new
    /// tick's, rounding half away from zero) and
    /// `sequence = last.sequence + skipped + 1`, so
    /// `sequence == previous.sequence + skipped + 1` holds throughout. A link that
    /// was paused when it was registered again (or paused before that first tick)
    /// reports `skipped = 0` instead, like any resume. Later ticks keep the
    /// daemon's `skipped`, with `sequence` offset by a constant.
    public let ticks: AsyncStream<TickNotification>

    /// What became of each frame this link presented (``present(sequence:at:afterMinimumDuration:)``):
    /// shown at a vsync (`presentedTime`, `hitch`) or dropped. `link` is ``id`` and
    /// `sequence` is in the numbering of ``ticks``. Buffered like ``ticks`` (the newest
    /// kept); it finishes when the link ends.
    public let presented: AsyncStream<PresentedNotification>

    let record: LinkRecord

    init(
        connection: FrameRateConnection, status: LinkStatusResult, display: DisplayID, ticks: AsyncStream<TickNotification>,
        presented: AsyncStream<PresentedNotification>, record: LinkRecord
    ) {
        self.presented = presented
        self.id = record.snapshot.id ?? status.link
        self.display = display
        self.refreshRate = status.refreshRate
        self.callbackRate = status.callbackRate
        self.decision = status.decision
        self.limit = status.limit
        self.connection = connection
        self.ticks = ticks
        self.record = record
    }

    /// The request that would register this link as it stands now (its
    /// current range and paused flag, label, display and entitlement).
    public var registration: RegisterRequest { record.snapshot.registration }

    /// The current range, Hz.
    public var range: FrameRateRange { registration.range }

    /// Whether the link is paused.
    public var isPaused: Bool { registration.paused }

    /// The latest Register or Update result (its `link` is ``id``): refresh and
    /// callback rates, Hz. Updated by the re-registration after a reconnect too.
    public var latestStatus: LinkStatusResult? { record.snapshot.status }

    /// The link's id on the daemon it is registered with now: ``id`` until the
    /// first reconnect, then whatever the new daemon gave it; `nil` while the
    /// connection is down or the link is being registered again, and once it ended.
    public var daemonID: LinkID? { record.target?.id }

    /// How the link ended, or `nil` while it is live.
    public var end: DisplayLinkEnd? { record.snapshot.end }

    /// Changes the range, paused flag and/or adaptive pacing (`adaptive`: step down to a
    /// lower, even rate while frames keep missing their deadline); `nil` keeps a value.
    /// A reconnect registers the link again with the values last updated.
    /// - Throws: ``FrameRateClientError/connectionClosed`` while a reconnecting
    ///   connection is down (the link comes back with its previous values).
    @discardableResult
    public func update(
        range: FrameRateRange? = nil, paused: Bool? = nil, adaptive: Bool? = nil
    ) async throws(FrameRateClientError) -> LinkStatusResult {
        try await connection.update(record, range: range, paused: paused, adaptive: adaptive)
    }

    /// Pauses the link: no ticks until ``resume()``.
    @discardableResult
    public func pause() async throws(FrameRateClientError) -> LinkStatusResult {
        try await update(paused: true)
    }

    /// Resumes a paused link.
    @discardableResult
    public func resume() async throws(FrameRateClientError) -> LinkStatusResult {
        try await update(paused: false)
    }

    /// Removes the link; ``ticks`` finishes and ``end`` becomes ``DisplayLinkEnd/invalidated``.
    /// While a reconnecting connection is down this succeeds at once: the link is
    /// not registered again.
    public func invalidate() async throws(FrameRateClientError) {
        try await connection.invalidate(record)
    }

    /// Tells the daemon the frame for tick `sequence` (as this handle's ticks
    /// number it) is done (a notification). The sequence is mapped back to the
    /// daemon's; one from before the latest re-registration is sent as 0, which
    /// only turns overrun pacing on. While a reconnecting connection is down the
    /// report is dropped without an error. `contentVelocity` (points per second, finite,
    /// `>= 0`: the speed of the frame's fastest-moving content) lets the panel rate follow
    /// the display profile's velocity table while the callbacks keep their rate; a report
    /// counts for 0.5 s.
    public func frameDone(sequence: UInt64, contentVelocity: Double? = nil) async throws(FrameRateClientError) {
        try await connection.frameDone(record, sequence: sequence, contentVelocity: contentVelocity)
    }

    /// Commits the frame for tick `sequence` (a `Present` notification): the daemon shows
    /// it at the first vsync at or after the latest of now, `at` (seconds on
    /// `CLOCK_MONOTONIC`, `present(at:)`) and the previous shown frame plus
    /// `afterMinimumDuration` (seconds), and reports it on ``presented``. Counts as
    /// ``frameDone(sequence:contentVelocity:)``, `contentVelocity` included. Mapped and
    /// dropped during an outage like it.
    /// `vsyncId` aims the frame at one of the tick's ``TickNotification/timelines``: it is
    /// shown no earlier than that entry's `presentationTime`, and its hitch is measured from it.
    /// A tick from before the latest re-registration (the daemon restarted since) cannot be
    /// presented, since the daemon serving the link never sent it: its frame is reported
    /// finished instead (`FrameDone` with sequence 0), not shown, and ``presented`` gets
    /// nothing for it.
    public func present(
        sequence: UInt64, at: Double? = nil, afterMinimumDuration: Double? = nil, vsyncId: UInt64? = nil,
        contentVelocity: Double? = nil
    ) async throws(FrameRateClientError) {
        try await connection.present(
            record, sequence: sequence, at: at, afterMinimumDuration: afterMinimumDuration, vsyncId: vsyncId,
            contentVelocity: contentVelocity
        )
    }

    /// Changes how many frame timelines the link's ticks list (`timelines`, 1...7) and/or its
    /// frame latency (`preferredFrameLatency`, 1 or 2) (`DisplayLink/Update`); `nil` keeps a value.
    @discardableResult
    public func setFrameTiming(timelines: Int? = nil, preferredFrameLatency: Int? = nil) async throws(FrameRateClientError) -> LinkStatusResult {
        try await connection.update(record, range: nil, paused: nil, timelines: timelines, preferredFrameLatency: preferredFrameLatency)
    }
}

public import FrameRateModel
public import FrameRateProtocol

/// A display link registered on a ``FrameRateConnection``: its ticks, and the
/// operations on it. Keeps its connection open while it exists.
///
/// The handle remembers the registration as it stands now (``registration``:
/// range and paused flag after every update), so the link can be registered
/// again on a new connection. Dropping the handle does not invalidate the link;
/// ``invalidate()`` does, and so does closing the connection.
public final class DisplayLinkHandle: Sendable {
    /// The link's id on the daemon.
    public let id: LinkID
    /// The display it is on.
    public let display: DisplayID
    /// The refresh rate arbitration chose at registration, Hz.
    public let refreshRate: Double
    /// The link's callback rate at registration, Hz.
    public let callbackRate: Double
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
    public let ticks: AsyncStream<TickNotification>

    private let record: LinkRecord

    init(connection: FrameRateConnection, status: LinkStatusResult, display: DisplayID, ticks: AsyncStream<TickNotification>, record: LinkRecord) {
        self.id = status.link
        self.display = display
        self.refreshRate = status.refreshRate
        self.callbackRate = status.callbackRate
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

    /// The latest Register or Update result: refresh and callback rates, Hz.
    public var latestStatus: LinkStatusResult? { record.snapshot.status }

    /// How the link ended, or `nil` while it is live.
    public var end: DisplayLinkEnd? { record.snapshot.end }

    /// Changes the range and/or paused flag; `nil` keeps a value.
    @discardableResult
    public func update(range: FrameRateRange? = nil, paused: Bool? = nil) async throws(FrameRateClientError) -> LinkStatusResult {
        try await connection.update(link: id, range: range, paused: paused)
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
    public func invalidate() async throws(FrameRateClientError) {
        try await connection.invalidate(link: id)
    }

    /// Tells the daemon the frame for tick `sequence` is done (a notification).
    public func frameDone(sequence: UInt64) async throws(FrameRateClientError) {
        try await connection.frameDone(link: id, sequence: sequence)
    }
}

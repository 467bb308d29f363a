public import FrameRateModel
public import FrameRateProtocol

extension FrameRateConnection {
    /// The default ``register(_:tickBufferLimit:)`` tick buffer: 8 ticks (67 ms at 120 Hz).
    public static let defaultTickBufferLimit = 8

    /// Registers a display link (`framerate.v1.DisplayLink/Register`); its ticks
    /// arrive on the returned handle's ``DisplayLinkHandle/ticks``.
    ///
    /// - Parameters:
    ///   - range: the frame-rate range, Hz.
    ///   - display: the display, or `nil` for the default display.
    ///   - paused: whether the link starts paused (no ticks until resumed).
    ///   - label: a label shown by `framectl status`.
    ///   - highFrameRate: whether this client declares the high-frame-rate entitlement.
    ///   - tickBufferLimit: how many undelivered ticks are kept; see ``DisplayLinkHandle/ticks``.
    public func register(
        range: FrameRateRange,
        display: DisplayID? = nil,
        paused: Bool = false,
        label: String? = nil,
        highFrameRate: Bool = false,
        tickBufferLimit: Int = FrameRateConnection.defaultTickBufferLimit
    ) async throws(FrameRateClientError) -> DisplayLinkHandle {
        try await register(
            RegisterRequest(range: range, display: display, paused: paused, label: label, highFrameRate: highFrameRate),
            tickBufferLimit: tickBufferLimit
        )
    }

    /// Registers a display link from a complete request (e.g. a handle's
    /// ``DisplayLinkHandle/registration``, to re-create it on another connection).
    public func register(
        _ request: RegisterRequest,
        tickBufferLimit: Int = FrameRateConnection.defaultTickBufferLimit
    ) async throws(FrameRateClientError) -> DisplayLinkHandle {
        precondition(tickBufferLimit > 0, "tickBufferLimit must be positive")
        let (ticks, continuation) = AsyncStream.makeStream(of: TickNotification.self, bufferingPolicy: .bufferingNewest(tickBufferLimit))
        let record = LinkRecord(registration: request)
        let result = try await call(
            V1Method.register.rawValue, params: request.jsonValue, route: .link(LinkRoute(ticks: continuation, record: record))
        )
        let status = try ResultDecoding.decode(.register) { () throws(RPCError) in try LinkStatusResult(json: result) }
        record.didUpdate(status: status, range: nil, paused: nil)
        return DisplayLinkHandle(
            connection: self, status: status, display: status.display ?? request.display ?? DisplayID(rawValue: 0),
            ticks: ticks, record: record
        )
    }

    /// Changes link `link`'s range and/or paused flag (`DisplayLink/Update`);
    /// `nil` keeps a value. Returns the new refresh and callback rates.
    public func update(link: LinkID, range: FrameRateRange? = nil, paused: Bool? = nil) async throws(FrameRateClientError) -> LinkStatusResult {
        let result = try await call(.update, params: UpdateRequest(link: link, range: range, paused: paused).jsonValue)
        let status = try ResultDecoding.decode(.update) { () throws(RPCError) in try LinkStatusResult(json: result) }
        router.record(for: link)?.didUpdate(status: status, range: range, paused: paused)
        return status
    }

    /// Removes link `link` (`DisplayLink/Invalidate`); its tick stream finishes.
    public func invalidate(link: LinkID) async throws(FrameRateClientError) {
        _ = try await call(.invalidate, params: LinkRequest(link: link).jsonValue)
        router.removeLink(link, end: .invalidated)
    }

    /// Tells the daemon the frame for tick `sequence` of link `link` is done
    /// (`DisplayLink/FrameDone`, sent as a notification: no answer is awaited).
    public func frameDone(link: LinkID, sequence: UInt64) async throws(FrameRateClientError) {
        try await notify(V1Method.frameDone.rawValue, params: FrameDoneRequest(link: link, sequence: sequence).jsonValue)
    }
}

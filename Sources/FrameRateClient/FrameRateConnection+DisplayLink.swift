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
    ///   - adaptive: whether the link steps down to a lower, even rate while its frames keep
    ///     missing their deadline (measured from each tick to its ``frameDone(link:sequence:)``).
    ///   - timelines: how many future frame timelines each tick lists (1...7; ``TickNotification/timelines``).
    ///   - preferredFrameLatency: in how many intervals a frame started at a tick is shown
    ///     (1 or 2; ``TickNotification/targetPresentationTimestamp``).
    ///   - tickBufferLimit: how many undelivered ticks are kept; see ``DisplayLinkHandle/ticks``.
    public func register(
        range: FrameRateRange,
        display: DisplayID? = nil,
        paused: Bool = false,
        label: String? = nil,
        highFrameRate: Bool = false,
        adaptive: Bool = false,
        timelines: Int = 1,
        preferredFrameLatency: Int = 1,
        tickBufferLimit: Int = FrameRateConnection.defaultTickBufferLimit
    ) async throws(FrameRateClientError) -> DisplayLinkHandle {
        var request = RegisterRequest(range: range, display: display, paused: paused, label: label, highFrameRate: highFrameRate)
        request.adaptive = adaptive
        request.timelines = timelines
        request.preferredFrameLatency = preferredFrameLatency
        return try await register(request, tickBufferLimit: tickBufferLimit)
    }

    /// Registers a display link from a complete request (e.g. a handle's
    /// ``DisplayLinkHandle/registration``, to re-create it on another connection).
    /// While a reconnecting connection is down this fails at once with
    /// ``FrameRateClientError/connectionClosed``.
    public func register(
        _ request: RegisterRequest,
        tickBufferLimit: Int = FrameRateConnection.defaultTickBufferLimit
    ) async throws(FrameRateClientError) -> DisplayLinkHandle {
        precondition(tickBufferLimit > 0, "tickBufferLimit must be positive")
        let (ticks, continuation) = AsyncStream.makeStream(of: TickNotification.self, bufferingPolicy: .bufferingNewest(tickBufferLimit))
        let (presented, presentedContinuation) = AsyncStream.makeStream(
            of: PresentedNotification.self, bufferingPolicy: .bufferingNewest(tickBufferLimit)
        )
        let record = LinkRecord(registration: request, ticks: continuation, presented: presentedContinuation, registry: core.registry)
        let result = try await call(V1Method.register.rawValue, params: request.jsonValue, route: .link(record, restoring: false))
        let status = try ResultDecoding.decode(.register) { () throws(RPCError) in try LinkStatusResult(json: result) }
        let current = record.didUpdate(status: status, range: nil, paused: nil)
        return DisplayLinkHandle(
            connection: self, status: current, display: status.display ?? request.display ?? DisplayID(rawValue: 0),
            ticks: ticks, presented: presented, record: record
        )
    }

    /// Changes link `link`'s range, paused flag and/or adaptive pacing (`DisplayLink/Update`);
    /// `nil` keeps a value. Returns the new refresh and callback rates.
    ///
    /// `link` is the application-visible id (``DisplayLinkHandle/id``); a link of
    /// this connection is updated under its current daemon-side id.
    public func update(
        link: LinkID, range: FrameRateRange? = nil, paused: Bool? = nil, adaptive: Bool? = nil
    ) async throws(FrameRateClientError) -> LinkStatusResult {
        if let record = core.registry.link(link) {
            return try await update(record, range: range, paused: paused, adaptive: adaptive)
        }
        let result = try await call(.update, params: UpdateRequest(link: link, range: range, paused: paused, adaptive: adaptive).jsonValue)
        return try ResultDecoding.decode(.update) { () throws(RPCError) in try LinkStatusResult(json: result) }
    }

    /// Removes link `link` (`DisplayLink/Invalidate`); its tick stream finishes.
    /// `link` is the application-visible id.
    public func invalidate(link: LinkID) async throws(FrameRateClientError) {
        if let record = core.registry.link(link) {
            return try await invalidate(record)
        }
        let session = try core.currentSession()
        _ = try await call(.invalidate, params: LinkRequest(link: link).jsonValue, on: session) { _ in
            session.router.removeLink(link, end: .invalidated)
        }
    }

    /// Tells the daemon the frame for tick `sequence` of link `link` is done
    /// (`DisplayLink/FrameDone`, sent as a notification: no answer is awaited).
    /// `link` and `sequence` are the application's (as its ticks carry them).
    /// `contentVelocity` (points per second, finite, `>= 0`) is the speed of the frame's
    /// fastest-moving content: the panel then follows the display profile's velocity table
    /// while the link's callbacks keep their rate.
    public func frameDone(link: LinkID, sequence: UInt64, contentVelocity: Double? = nil) async throws(FrameRateClientError) {
        if let record = core.registry.link(link) {
            return try await frameDone(record, sequence: sequence, contentVelocity: contentVelocity)
        }
        try await notify(
            V1Method.frameDone.rawValue, params: FrameDoneRequest(link: link, sequence: sequence, contentVelocity: contentVelocity).jsonValue
        )
    }

    // MARK: - Through a link's record

    /// The error for an operation on a link that has ended.
    private static func ended(_ record: LinkRecord) -> FrameRateClientError {
        let snapshot = record.snapshot
        let id = snapshot.id.map { "\($0.rawValue)" } ?? "?"
        let why = snapshot.end.map { "\($0)" } ?? "ended"
        return .rpc(.status(.notFound, "link \(id) does not exist on this connection any more (\(why))"))
    }

    func update(
        _ record: LinkRecord, range: FrameRateRange?, paused: Bool?, adaptive: Bool? = nil, timelines: Int? = nil,
        preferredFrameLatency: Int? = nil
    ) async throws(FrameRateClientError) -> LinkStatusResult {
        guard record.snapshot.end == nil else { throw Self.ended(record) }
        guard let target = record.target, let session = core.session(for: target.router) else { throw .connectionClosed }
        var request = UpdateRequest(link: target.id, range: range, paused: paused, adaptive: adaptive)
        request.timelines = timelines
        request.preferredFrameLatency = preferredFrameLatency
        let result = try await call(.update, params: request.jsonValue, on: session) { value in
            // Recorded as the answer arrives, so a reconnect right after registers the link as updated.
            if let status = try? LinkStatusResult(json: value) {
                record.didUpdate(status: status, range: range, paused: paused, adaptive: adaptive)
            }
        }
        var status = try ResultDecoding.decode(.update) { () throws(RPCError) in try LinkStatusResult(json: result) }
        status.link = record.snapshot.id ?? status.link
        return status
    }

    func invalidate(_ record: LinkRecord) async throws(FrameRateClientError) {
        guard record.snapshot.end == nil else { throw Self.ended(record) }
        guard let target = record.target, let session = core.session(for: target.router) else {
            // Between connections the daemon has no such link: ending it here is all there is to do.
            guard core.reconnects else { throw .connectionClosed }
            record.finish(end: .invalidated)
            return
        }
        do throws(FrameRateClientError) {
            _ = try await call(.invalidate, params: LinkRequest(link: target.id).jsonValue, on: session) { _ in
                session.router.removeLink(target.id, end: .invalidated)
            }
        } catch .connectionClosed where core.reconnects {
            // The connection dropped under the call, which released the link; if a new
            // connection registered it again meanwhile, release it there too.
            record.finish(end: .invalidated)
            if let again = record.snapshot.attachment.target, let current = core.session(for: again.router) {
                current.router.removeLink(again.id, end: .invalidated)
                try? await notify(V1Method.invalidate.rawValue, params: LinkRequest(link: again.id).jsonValue, on: current)
            }
        }
    }

    /// `Present` for a link of this connection (a notification), like ``frameDone(_:sequence:)``.
    func present(
        _ record: LinkRecord, sequence: UInt64, at: Double?, afterMinimumDuration: Double?, vsyncId: UInt64? = nil,
        contentVelocity: Double? = nil
    ) async throws(FrameRateClientError) {
        guard !core.isClosed else { throw .connectionClosed }
        guard record.snapshot.end == nil else { return }
        guard let target = record.target, let session = core.session(for: target.router) else {
            guard core.reconnects else { throw .connectionClosed }
            return
        }
        let daemonSequence = record.daemonSequence(for: sequence)
        let method: V1Method
        let params: JSONValue
        if daemonSequence == 0 {
            // Not a tick of this registration (the daemon restarted since, or the link's first
            // tick after a reconnect has not come): the daemon serving the link never sent it,
            // and Present names a tick it sent (sequence >= 1). The frame is reported finished,
            // as frameDone reports such a tick, which keeps the pacing a Present gives.
            method = .frameDone
            params = FrameDoneRequest(link: target.id, sequence: 0, contentVelocity: contentVelocity).jsonValue
        } else {
            var request = PresentRequest(link: target.id, sequence: daemonSequence, at: at, afterMinimumDuration: afterMinimumDuration)
            request.vsyncId = vsyncId
            request.contentVelocity = contentVelocity
            method = .present
            params = request.jsonValue
        }
        do throws(FrameRateClientError) {
            try await notify(method.rawValue, params: params, on: session)
        } catch .connectionClosed where core.reconnects {
            return
        }
    }

    func frameDone(_ record: LinkRecord, sequence: UInt64, contentVelocity: Double? = nil) async throws(FrameRateClientError) {
        guard !core.isClosed else { throw .connectionClosed }
        guard record.snapshot.end == nil else { return }  // the daemon would ignore it too
        guard let target = record.target, let session = core.session(for: target.router) else {
            // Between connections, or before the link is registered again: nothing to report to.
            guard core.reconnects else { throw .connectionClosed }
            return
        }
        let params = FrameDoneRequest(
            link: target.id, sequence: record.daemonSequence(for: sequence), contentVelocity: contentVelocity
        ).jsonValue
        do throws(FrameRateClientError) {
            try await notify(V1Method.frameDone.rawValue, params: params, on: session)
        } catch .connectionClosed where core.reconnects {
            return
        }
    }
}

public import FrameRateProtocol

extension FrameRateConnection {
    /// The default ``watch(eventBufferLimit:)`` event buffer: 1024 events.
    public static let defaultEventBufferLimit = 1024

    /// Every display, its rate, reason, caps and links (`Compositor/GetState`).
    public func state() async throws(FrameRateClientError) -> CompositorState {
        let result = try await call(.getState, params: JSONValue.object([:]))
        return try ResultDecoding.decode(.getState) { () throws(RPCError) in try CompositorState(json: result) }
    }

    /// Changes power and thermal caps (`Compositor/SetCaps`, privileged); returns
    /// each changed display's new caps.
    /// - Throws: ``FrameRateClientError/rpc(_:)`` with `PERMISSION_DENIED` (its message
    ///   names the admin group) when this user may not change caps.
    public func setCaps(_ request: SetCapsRequest) async throws(FrameRateClientError) -> SetCapsResult {
        let result = try await call(.setCaps, params: request.jsonValue)
        return try ResultDecoding.decode(.setCaps) { () throws(RPCError) in try SetCapsResult(json: result) }
    }

    /// Subscribes to compositor events (`Compositor/Watch`).
    /// - Parameter eventBufferLimit: how many undelivered events are kept; see ``CompositorWatch/events``.
    public func watch(eventBufferLimit: Int = FrameRateConnection.defaultEventBufferLimit) async throws(FrameRateClientError) -> CompositorWatch {
        precondition(eventBufferLimit > 0, "eventBufferLimit must be positive")
        let (events, continuation) = AsyncStream.makeStream(
            of: CompositorWatchEvent.self, bufferingPolicy: .bufferingNewest(eventBufferLimit)
        )
        let record = WatchRecord(events: continuation, registry: core.registry)
        let result = try await call(V1Method.watch.rawValue, params: JSONValue.object([:]), route: .watch(record, restoring: false))
        let (id, state) = try ResultDecoding.decode(.watch) { () throws(RPCError) -> (UInt64, CompositorState) in
            let reader = try ParamReader(result, path: "result", allowed: nil)
            let id = UInt64(try reader.requiredInteger("watch", minimum: 1))
            return (id, try CompositorState(json: result["state"] ?? .object([:])))
        }
        return CompositorWatch(connection: self, id: record.snapshot.id ?? id, initialState: state, rawResult: result, events: events)
    }

    /// Ends watch `watch` (`Compositor/Unwatch`, by its application-visible id);
    /// its event stream finishes.
    public func unwatch(_ watch: UInt64) async throws(FrameRateClientError) {
        guard let record = core.registry.watch(watch) else {
            let session = try core.currentSession()
            _ = try await call(.unwatch, params: UnwatchRequest(watch: watch).jsonValue, on: session) { _ in
                session.router.removeWatch(watch)
            }
            return
        }
        guard let target = record.target, let current = core.session(for: target.router) else {
            guard core.reconnects else { throw .connectionClosed }
            record.finish()
            return
        }
        do throws(FrameRateClientError) {
            _ = try await call(.unwatch, params: UnwatchRequest(watch: target.id).jsonValue, on: current) { _ in
                current.router.removeWatch(target.id)
            }
        } catch .connectionClosed where core.reconnects {
            record.finish()
            if let again = record.snapshot.attachment.target, let now = core.session(for: again.router) {
                now.router.removeWatch(again.id)
                try? await notify(V1Method.unwatch.rawValue, params: UnwatchRequest(watch: again.id).jsonValue, on: now)
            }
        }
    }

    /// The gRPC health status of `service` (`grpc.health.v1.Health/Check`), e.g.
    /// `SERVING`; `nil` or empty asks about the whole daemon.
    public func health(service: String? = nil) async throws(FrameRateClientError) -> String {
        let result = try await call(.healthCheck, params: HealthCheckRequest(service: service).jsonValue)
        guard let status = result["status"]?.stringValue else {
            throw .protocolViolation("a Check result without a status string")
        }
        return status
    }

    /// Every service, method and parameter (`framerate.v1.Reflection/ListServices`),
    /// as the daemon sends it; see `ServiceCatalog.jsonValue` for the shape.
    public func listServices() async throws(FrameRateClientError) -> JSONValue {
        try await call(.listServices, params: JSONValue.object([:]))
    }
}

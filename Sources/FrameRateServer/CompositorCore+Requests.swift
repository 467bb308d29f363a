import FrameRateModel
import FrameRateProtocol
import Logging
import FrameRatePosix
import NIOCore

extension CompositorCore {
    /// Handles one line from `session`: a request, a notification or a batch.
    /// - Returns: the reply line(s), or `nil` when nothing is to be answered.
    func handle(line: ByteBuffer, from session: Session) -> ByteBuffer? {
        let inbound = JSONRPCInbound.parse(line: line, configuration: rpcConfiguration)
        // A whole snapshot costs far more than any other call: a batch may ask for one.
        var snapshots = 0
        return inbound.reply(allocator: session.context.channel.allocator) { method, params in
            let result: Result<JSONRPCInbound.MethodResult, RPCError>
            if method == V1Method.getState.rawValue || method == V1Method.watch.rawValue {
                snapshots += 1
                if snapshots > 1 {
                    result = .failure(
                        .status(
                            .resourceExhausted,
                            "a batch may hold one GetState or Watch (each returns the whole state); send the others on their own lines"
                        )
                    )
                } else if method == V1Method.getState.rawValue {
                    result = Result { () throws(RPCError) in
                        _ = try ParamReader(params, allowed: [])
                        return .encoded(encodedState())
                    }
                } else {
                    result = dispatch(method: method, params: params, session: session).map { .value($0) }
                }
            } else {
                result = dispatch(method: method, params: params, session: session).map { .value($0) }
            }
            if case .failure(let error) = result { logRejection(method: method, error: error, session: session) }
            return result
        }
    }

    private func logRejection(method: String, error: RPCError, session: Session) {
        guard case .log(let suppressed) = session.rejectionLog.admit(at: MonotonicClock.now) else { return }
        logger.info(
            "request rejected: \(method): \(error.message)\(SessionRejectionLog.note(suppressed: suppressed))",
            metadata: peerMetadata(session.peer).merging(
                ["event": "request-rejected", "method": "\(method)", "status": "\(error.grpcStatus.name)"]
            ) { $1 }
        )
    }

    /// Runs one method. Every failure is an `RPCError` the client can act on.
    func dispatch(method: String, params: JSONValue?, session: Session) -> Result<JSONValue, RPCError> {
        guard lifecycle == .running || method == V1Method.healthCheck.rawValue else {
            return .failure(.status(.unavailable, "framerated is shutting down; reconnect once it is back"))
        }
        do throws(RPCError) {
            guard let known = V1Method(rawValue: method) else { throw .methodNotFound(method) }
            switch known {
            case .register: return .success(try register(params, session: session))
            case .update: return .success(try update(params, session: session))
            case .invalidate: return .success(try invalidate(params, session: session))
            case .frameDone: return .success(try frameDone(params, session: session))
            case .boost: return .success(try boost(params, session: session))
            case .getState: return .success(try getState(params))
            case .setCaps: return .success(try setCaps(params, session: session))
            case .watch: return .success(try watch(params, session: session))
            case .unwatch: return .success(try unwatch(params, session: session))
            case .healthCheck: return .success(try healthCheck(params))
            case .listServices:
                _ = try ParamReader(params, allowed: [])
                return .success(ServiceCatalog.jsonValue)
            case .tick, .closed, .event:
                throw RPCError(
                    code: RPCError.methodNotFoundCode,
                    message: "\(method) is a notification the daemon sends; clients cannot call it",
                    data: ["status": .string(GRPCStatusCode.unimplemented.name), "method": .string(method)]
                )
            }
        } catch {
            return .failure(error)
        }
    }

    private func register(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try RegisterRequest(params: params)
        let limit = configuration.limits.linksPerConnection
        guard shared.read({ $0.compositor.linkCount(of: session.owner) }) < limit else {
            throw .status(
                .resourceExhausted,
                "this connection already holds \(limit) links (the limit, --max-links-per-connection); invalidate one or open another connection"
            )
        }
        try requireUserRoom(
            session, held: usage[session.peer.uid].links, limit: configuration.limits.linksPerUser,
            what: "links", flag: "--max-links-per-user", remedy: "invalidate some first"
        )
        let at = now()
        let configuration = DisplayLinkConfiguration(
            range: request.range, isPaused: request.paused, hasHighFrameRateEntitlement: request.highFrameRate, label: request.label,
            isAdaptive: request.adaptive
        )
        let (status, start) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                (
                    try state.compositor.register(owner: session.owner, display: request.display, configuration: configuration, at: at),
                    state.compositor.start
                )
            }
        }
        usage.add(session.peer.uid, links: 1)
        logger.info(
            "link \(status.link.rawValue) registered \(request.range) on display \(status.display.rawValue)",
            metadata: peerMetadata(session.peer).merging([
                "event": "link-registered", "link": "\(status.link.rawValue)", "display": "\(status.display.rawValue)",
                "range": "\(request.range)", "label": "\(request.label ?? "")", "high_frame_rate": "\(request.highFrameRate)",
                "paused": "\(request.paused)", "adaptive": "\(request.adaptive)",
            ]) { $1 }
        )
        if let link = linkState(status.link) { emit(.linkAdded(display: status.display, link: link)) }
        publishStatus()
        return LinkStatusResult(status, includeDisplay: true, start: start).jsonValue
    }

    private func update(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try UpdateRequest(params: params)
        let at = now()
        let (status, start) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                (
                    try state.compositor.update(
                        link: request.link, owner: session.owner, range: request.range, paused: request.paused, adaptive: request.adaptive, at: at
                    ),
                    state.compositor.start
                )
            }
        }
        logger.debug(
            "link \(request.link.rawValue) updated",
            metadata: ["link": "\(request.link.rawValue)", "range": "\(request.range.map { "\($0)" } ?? "-")", "paused": "\(request.paused.map { "\($0)" } ?? "-")"]
        )
        if let link = linkState(request.link) { emit(.linkUpdated(display: status.display, link: link)) }
        return LinkStatusResult(status, includeDisplay: false, start: start).jsonValue
    }

    private func invalidate(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try LinkRequest(params: params)
        let at = now()
        let display = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) -> DisplayID in
                let display = state.compositor.display(of: request.link)
                try state.compositor.invalidate(link: request.link, owner: session.owner, at: at)
                return display ?? state.compositor.displayIDs[0]
            }
        }
        usage.add(session.peer.uid, links: -1)
        logRelease(request.link, session: session, reason: "invalidated")
        emit(.linkRemoved(display: display, link: request.link, reason: "invalidated"))
        publishStatus()
        return .object([:])
    }

    private func frameDone(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try FrameDoneRequest(params: params)
        let at = now()
        // Pacing and frame timing only: nothing GetState shows changes and no deadline moves,
        // so no wake-up, unless an adaptive link stepped (``adaptiveStepped(_:link:session:)``).
        let step = try mapped { () throws(CompositorError) in
            try shared.update { (state) throws(CompositorError) in
                try state.compositor.frameFinished(link: request.link, owner: session.owner, sequence: request.sequence, at: at)
            }
        }
        if let step { adaptiveStepped(step, link: request.link, session: session) }
        return .object([:])
    }

    private func getState(_ params: JSONValue?) throws(RPCError) -> JSONValue {
        _ = try ParamReader(params, allowed: [])
        return currentState().jsonValue
    }

    private func setCaps(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try SetCapsRequest(params: params)
        try authorizeAdmin(session, action: "change caps")
        let at = now()
        let changed = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                try state.compositor.setCaps(display: request.display, at: at) { request.apply(to: &$0) }
            }
        }
        for (display, caps) in changed {
            logger.notice(
                "caps of display \(display.rawValue) set: low power \(caps.lowPowerMode), limit frame rate \(caps.limitFrameRate), thermal \(caps.thermalState.rawValue)",
                metadata: peerMetadata(session.peer).merging(["event": "caps-changed", "display": "\(display.rawValue)"]) { $1 }
            )
            emit(.capsChanged(display: display, caps: caps))
        }
        return SetCapsResult(displays: changed.map { (display: $0.0, caps: $0.1) }).jsonValue
    }

    private func watch(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        _ = try ParamReader(params, allowed: [])
        let limit = configuration.limits.watchesPerConnection
        guard session.watches.count < limit else {
            throw .status(
                .resourceExhausted,
                "this connection already holds \(limit) watches (the limit); one watch sees every event, so unwatch one first"
            )
        }
        try requireUserRoom(
            session, held: usage[session.peer.uid].watches, limit: configuration.limits.watchesPerUser,
            what: "watches", flag: "--max-watches-per-user", remedy: "unwatch some first"
        )
        usage.add(session.peer.uid, watches: 1)
        lastWatch += 1
        session.watches.insert(lastWatch)
        watchers[lastWatch] = session
        return ["watch": JSONValue(lastWatch), "state": currentState().jsonValue]
    }

    private func unwatch(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try UnwatchRequest(params: params)
        guard session.watches.remove(request.watch) != nil else {
            throw .status(.notFound, "watch \(request.watch) does not exist on this connection")
        }
        usage.add(session.peer.uid, watches: -1)
        watchers[request.watch] = nil
        return .object([:])
    }

    private func healthCheck(_ params: JSONValue?) throws(RPCError) -> JSONValue {
        let request = try HealthCheckRequest(params: params)
        if let service = request.service, !service.isEmpty, !ServiceCatalog.services.contains(service) {
            throw .status(
                .notFound, "unknown service '\(service)'; known: " + ServiceCatalog.services.joined(separator: ", ")
            )
        }
        return ["status": .string(lifecycle == .running ? "SERVING" : "NOT_SERVING")]
    }

    /// Refuses (`RESOURCE_EXHAUSTED`, naming the limit and its value) when an unprivileged
    /// user already holds `limit` of something across its connections.
    private func requireUserRoom(_ session: Session, held: Int, limit: Int, what: String, flag: String, remedy: String) throws(RPCError) {
        guard !session.isPrivileged, held >= limit else { return }
        throw .status(
            .resourceExhausted, "uid \(session.peer.uid) already holds \(held) \(what) (the per-user limit, \(flag) \(limit)); \(remedy)"
        )
    }

    /// Root, the daemon's own user and members of the admin group may change caps.
    private func authorizeAdmin(_ session: Session, action: String) throws(RPCError) {
        // Decided now, not at connect time: SIGHUP may have re-read the admin group.
        if isPrivileged(session.peer) { return }
        throw .status(
            .permissionDenied,
            "only root, the daemon's user and members of the '\(configuration.adminGroup)' group may \(action); "
                + "ask an administrator to run: usermod -aG \(configuration.adminGroup) <user> (then log in again)"
        )
    }

    /// The full state, with each link's holder.
    func currentState() -> CompositorState {
        let (snapshot, start) = shared.read { ($0.compositor.snapshot, $0.compositor.start) }
        return CompositorState(
            displays: snapshot.map { snapshot in
                DisplayState(snapshot, start: start) { owner in self.sessions[owner]?.peer.identity ?? PeerCredentials.unknown.identity }
            }
        )
    }

    /// ``currentState()`` as encoded JSON, built at most once per model generation: a
    /// flood of GetState between two changes costs one snapshot and one encoding, then a
    /// copy of the bytes per request.
    func encodedState() -> ByteBuffer {
        let generation = shared.read { $0.generation }
        if let stateCache, stateCache.generation == generation { return stateCache.bytes }
        var bytes = ByteBuffer()
        bytes.writeJSONValue(currentState().jsonValue)
        stateCache = (generation, bytes)
        return bytes
    }

    /// One link's state for a watch event; `nil` when nobody watches (no work on the hot path).
    func linkState(_ link: LinkID) -> LinkState? {
        guard !watchers.isEmpty else { return nil }
        let (snapshot, start) = shared.read { ($0.compositor.snapshot(of: link), $0.compositor.start) }
        guard let snapshot else { return nil }
        return LinkState(snapshot, peer: sessions[snapshot.owner]?.peer.identity ?? PeerCredentials.unknown.identity, start: start)
    }

    /// Runs a model operation, turning its errors into gRPC statuses.
    func mapped<T>(_ body: () throws(CompositorError) -> T) throws(RPCError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .unknownDisplay: throw .status(.notFound, error.description)
            case .linkNotFound: throw .status(.notFound, error.description)
            case .sequenceNotDelivered: throw .status(.outOfRange, error.description)
            }
        }
    }
}

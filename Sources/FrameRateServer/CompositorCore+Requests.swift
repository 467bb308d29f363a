import FrameRateModel
import FrameRateProtocol
import Logging
import FrameRatePosix
import NIOCore
import UntrustedText

extension CompositorCore {
    /// Parses one line from a client (a request, a notification or a batch) for
    /// ``continueLine(_:from:pausingWhen:)``.
    func beginLine(_ line: ByteBuffer) -> LineInProgress {
        LineInProgress(JSONRPCInbound.parse(line: line, configuration: rpcConfiguration))
    }

    /// Executes `line`'s messages from `session`, in order, until all have run or
    /// `shouldPause` says to stop (asked after each message).
    /// - Returns: whether the line is finished, and then its reply (`nil`: nothing to answer).
    func continueLine(_ line: inout LineInProgress, from session: Session, pausingWhen shouldPause: () -> Bool) -> (
        finished: Bool, reply: ByteBuffer?
    ) {
        // A whole snapshot (or the OpenRPC document) costs far more than any other call: a
        // batch may ask for one. Trace answers with the whole state too (and a batch could
        // start and stop one 64 times over).
        var documents = line.documents
        line.execution.run(
            encodingHandler: { method, params in
                let result: Result<JSONRPCInbound.MethodResult, RPCError>
                session.handledRequests += 1
                if session.becameTickSocket {
                    // The rest of the batch whose Attach made it a tick socket.
                    result = .failure(
                        .status(
                            .failedPrecondition,
                            "this connection became a tick socket: the daemon reads nothing more from it; send requests on the other connection"
                        )
                    )
                } else if method == V1Method.getState.rawValue || method == V1Method.watch.rawValue || method == V1Method.trace.rawValue
                    || method == OpenRPCDocument.discoverMethod
                {
                    documents += 1
                    if documents > 1 {
                        result = .failure(
                            .status(
                                .resourceExhausted,
                                "a batch may hold one GetState, Watch, Trace or rpc.discover (each returns a whole document); send the others on their own lines"
                            )
                        )
                    } else if method == V1Method.getState.rawValue {
                        result = Result { () throws(RPCError) in
                            _ = try ParamReader(params, allowed: [])
                            return .encoded(encodedState(for: viewer(of: session)))
                        }
                    } else {
                        result = dispatch(method: method, params: params, session: session).map { .value($0) }
                    }
                } else {
                    result = dispatch(method: method, params: params, session: session).map { .value($0) }
                }
                if case .failure(let error) = result { logRejection(method: method, error: error, session: session) }
                return result
            },
            // Once Attach has made the connection a tick socket, the line runs to its end
            // in this turn (the rest are cheap refusals): its reply must reach the socket
            // before the other connection's next Register can make a tick go there.
            pausingWhen: { !session.becameTickSocket && shouldPause() }
        )
        line.documents = documents
        guard line.execution.isFinished else { return (false, nil) }
        return (true, line.execution.reply(allocator: session.context.channel.allocator))
    }

    /// Logs an error reply, at most 10 per user per 10 s (``UserRejectionLogs``): per
    /// connection, a user sending one bad batch per new connection logged without end.
    private func logRejection(method: String, error: RPCError, session: Session) {
        guard case .log(let suppressed) = requestRejectionLogs.admit(uid: session.peer.uid, at: wallNow()) else { return }
        let note = UserRejectionLogs<MonotonicClock.Instant>.note(suppressed: suppressed, uid: session.peer.uid, kind: .rejectedRequest)
        logger.info(
            "request rejected: \(method): \(error.message)\(note)",
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
            if method == OpenRPCDocument.discoverMethod {
                _ = try ParamReader(params, allowed: [])
                return .success(OpenRPCDocument.jsonValue(version: configuration.version))
            }
            guard let known = V1Method(rawValue: method) else { throw .methodNotFound(method) }
            switch known {
            case .register: return .success(try register(params, session: session))
            case .update: return .success(try update(params, session: session))
            case .invalidate: return .success(try invalidate(params, session: session))
            case .frameDone: return .success(try frameDone(params, session: session))
            case .present: return .success(try present(params, session: session))
            case .boost: return .success(try boost(params, session: session))
            case .getState: return .success(try getState(params, session: session))
            case .setCaps: return .success(try setCaps(params, session: session))
            case .watch: return .success(try watch(params, session: session))
            case .unwatch: return .success(try unwatch(params, session: session))
            case .healthCheck: return .success(try healthCheck(params))
            case .listServices:
                _ = try ParamReader(params, allowed: [])
                return .success(ServiceCatalog.listServicesResult(version: configuration.version))
            case .trace: return .success(try startTrace(params, session: session))
            case .stopTrace: return .success(try stopTrace(params, session: session))
            case .advance: return .success(try advance(params))
            case .openTickSocket: return .success(try openTickSocket(params, session: session))
            case .attachTickSocket: return .success(try attachTickSocket(params, session: session))
            case .tick, .closed, .event, .presented, .traceRecords:
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
        // Before anything can fail: from here on, the fan-out may claim the socket that
        // carries this connection's ticks, so it can no longer move to a tick socket.
        session.hasRegisteredLinks = true
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
        var configuration = DisplayLinkConfiguration(
            range: request.range, isPaused: request.paused, hasHighFrameRateEntitlement: request.highFrameRate, label: request.label,
            isAdaptive: request.adaptive
        )
        configuration.timelines = request.timelines
        configuration.frameLatency = request.preferredFrameLatency
        let (status, start) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                (
                    try state.compositor.register(owner: session.owner, display: request.display, configuration: configuration, at: at),
                    state.compositor.start
                )
            }
        }
        usage.add(session.peer.uid, links: 1)
        logLinkLifecycle(
            "link \(status.link.rawValue) registered \(request.range) on display \(status.display.rawValue)", session: session,
            metadata: [
                "event": "link-registered", "link": "\(status.link.rawValue)", "display": "\(status.display.rawValue)",
                "range": "\(request.range)", "label": "\(request.label ?? "")", "high_frame_rate": "\(request.highFrameRate)",
                "paused": "\(request.paused)", "adaptive": "\(request.adaptive)",
            ]
        )
        emitLinkEvent(status.link, holder: session.peer) { .linkAdded(display: status.display, link: $0) }
        trace {
            let state = shared.read { $0.compositor.snapshot(of: status.link) }.map {
                LinkState($0, peer: session.peer.identity, start: start)
            }
            return (state.map { [TraceRecord.linkAdded(display: status.display, at: at.seconds, $0)] } ?? [])
                + decisionRecords([status.display], at: at)
        }
        publishStatus()
        var result = LinkStatusResult(
            status, includeDisplay: true, start: start, showingLabelOf: labelVisibility(viewer(of: session), of: status.decision)
        )
        result.timelines = request.timelines
        result.preferredFrameLatency = request.preferredFrameLatency
        return result.jsonValue
    }

    private func update(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try UpdateRequest(params: params)
        let at = now()
        let (status, start, configuration) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) in
                if request.timelines != nil || request.preferredFrameLatency != nil {
                    try state.compositor.setFrameTiming(
                        link: request.link, owner: session.owner, timelines: request.timelines, frameLatency: request.preferredFrameLatency
                    )
                }
                return (
                    try state.compositor.update(
                        link: request.link, owner: session.owner, range: request.range, paused: request.paused, adaptive: request.adaptive, at: at
                    ),
                    state.compositor.start,
                    state.compositor.snapshot(of: request.link)?.configuration
                )
            }
        }
        logger.debug(
            "link \(request.link.rawValue) updated",
            metadata: ["link": "\(request.link.rawValue)", "range": "\(request.range.map { "\($0)" } ?? "-")", "paused": "\(request.paused.map { "\($0)" } ?? "-")"]
        )
        emitLinkEvent(request.link, holder: session.peer) { .linkUpdated(display: status.display, link: $0) }
        trace { decisionRecords([status.display], at: at) }
        var result = LinkStatusResult(
            status, includeDisplay: false, start: start, showingLabelOf: labelVisibility(viewer(of: session), of: status.decision)
        )
        result.timelines = configuration?.timelines
        result.preferredFrameLatency = configuration?.frameLatency
        return result.jsonValue
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
        announcedHeldBack[request.link] = nil
        emit(.linkRemoved(display: display, link: request.link, reason: "invalidated"))
        trace { [.linkRemoved(display: display, at: at.seconds, link: request.link)] + decisionRecords([display], at: at) }
        publishStatus()
        return .object([:])
    }

    private func frameDone(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try FrameDoneRequest(params: params)
        let at = now()
        // Pacing and frame timing only: nothing GetState shows changes and no deadline moves,
        // so no wake-up, unless an adaptive link stepped (``adaptiveStepped(_:link:session:)``).
        let (step, panelMoved) = try mapped { () throws(CompositorError) in
            try shared.update { (state) throws(CompositorError) -> (OverrunMonitor.Step?, Bool) in
                let step = try state.compositor.frameFinished(link: request.link, owner: session.owner, sequence: request.sequence, at: at)
                return (step, try state.reportContentVelocity(request.contentVelocity, link: request.link, owner: session.owner, at: at))
            }
        }
        if let step { adaptiveStepped(step, link: request.link, session: session) } else if panelMoved { shared.change { _ in } }
        return .object([:])
    }

    /// `Present`: the frame shows at a vsync the tick plane reaches (which sends `Presented`
    /// then); a pending frame it replaces is dropped, and its `Presented` goes out here, now.
    private func present(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let request = try PresentRequest(params: params)
        let at = now()
        var notBefore: MonotonicClock.Instant?
        if let seconds = request.at {
            guard seconds <= at.seconds + PresentRequest.maximumLead else {
                throw .invalidParams(
                    field: "at",
                    "at is \(FrameRateMath.format(seconds - at.seconds)) s ahead of the daemon's CLOCK_MONOTONIC; present at most \(FrameRateMath.format(PresentRequest.maximumLead)) s ahead"
                )
            }
            notBefore = MonotonicClock.Instant(seconds: seconds)
        }
        let interval = request.afterMinimumDuration.map { Duration.nanoseconds(Int64(($0 * 1e9).rounded())) }
        // A change: the frame's vsync may be due before the tick plane's next wake-up.
        let (replaced, step) = try mapped { () throws(CompositorError) in
            try shared.change { (state) throws(CompositorError) -> (Presentation<MonotonicClock.Instant>?, OverrunMonitor.Step?) in
                // A valid Present is a FrameDone too (the model measures the frame time an
                // adaptive link steps on); a refused one counts for nothing.
                let presented = try state.compositor.present(
                    link: request.link, owner: session.owner, sequence: request.sequence, notBefore: notBefore,
                    minimumInterval: interval, vsyncID: request.vsyncId, at: at
                )
                _ = try state.reportContentVelocity(request.contentVelocity, link: request.link, owner: session.owner, at: at)
                return presented
            }
        }
        if let step { adaptiveStepped(step, link: request.link, session: session) }
        trace {
            let display = shared.read { $0.compositor.display(of: request.link) } ?? DisplayID(rawValue: 0)
            return [.present(display: display, link: request.link, sequence: request.sequence, at: at.seconds)]
                + (replaced.map { [.presented(display: display, PresentedNotification($0))] } ?? [])
        }
        if let replaced {
            var buffer = session.context.channel.allocator.buffer(capacity: 192)
            JSONRPCOutboundMessage.notification(method: V1Method.presented.rawValue, params: PresentedNotification(replaced).jsonValue)
                .writeLine(into: &buffer)
            session.writeTickLine(buffer)
        }
        return .object([:])
    }

    private func getState(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        _ = try ParamReader(params, allowed: [])
        return currentState(for: viewer(of: session)).jsonValue
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
        trace { decisionRecords(changed.map(\.0), at: at) }
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
        return ["watch": JSONValue(lastWatch), "state": currentState(for: viewer(of: session)).jsonValue]
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
                // The client's text, shortened and with invisible characters named, as every error quotes it.
                .notFound, "unknown service '\(EchoedValue.text(service, limit: EchoedValue.nameLimit))'; known: "
                    + ServiceCatalog.services.joined(separator: ", ")
            )
        }
        var result: JSONObject = ["status": .string(lifecycle == .running ? "SERVING" : "NOT_SERVING")]
        for member in configuration.version?.members ?? [:] { result[member.key] = member.value }
        return .object(result)
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

    /// Who `session` is as a viewer of the state, decided now (SIGHUP may have re-read the admin group).
    func viewer(of session: Session) -> Viewer {
        Viewer(peer: session.peer, isPrivileged: isPrivileged(session.peer))
    }

    /// The whole state as `viewer` may see it: each link's holder, or `null` where hidden.
    /// Residency and hitch ratios are as of now; a link that has ended keeps the identity
    /// its connection had (``retiredPeers``), shown by the same rule.
    func currentState(for viewer: Viewer) -> CompositorState {
        let at = now()
        let (snapshot, start) = shared.read { ($0.compositor.snapshot(at: at), $0.compositor.start) }
        var state = CompositorState(
            displays: snapshot.map { snapshot in
                DisplayState(snapshot, start: start, now: at) { owner in viewer.identity(of: self.holder(of: owner)) }
            }
        )
        state.clock = clockName
        state.now = at.seconds
        return state
    }

    /// Who holds (or held) links of `owner`: its connection's peer, or the one it had;
    /// `nil` when unknown.
    func holder(of owner: OwnerID) -> PeerCredentials? {
        sessions[owner]?.peer ?? retiredPeers[owner]
    }

    /// ``currentState(for:)`` as encoded JSON, built at most once per model generation
    /// and viewer scope and reused for 100 ms after it was built (``EncodedStateCache``, at
    /// most 64 kept): a flood of GetState between two changes costs one snapshot and one
    /// encoding per scope every 100 ms (residency and hitch ratios change with time alone),
    /// then a copy of the bytes per request. An encoding serializes only the links that
    /// changed since the last one and copies the others (``EncodedLinkCache``).
    func encodedState(for viewer: Viewer) -> ByteBuffer {
        let (edition, start) = shared.read { state in
            (stateEdition(generation: state.generation, elapsed: state.compositor.start.duration(to: now())), state.compositor.start)
        }
        if let bytes = stateCache.bytes(for: viewer.scope, edition: edition, at: start.duration(to: now())) { return bytes }
        var bytes = ByteBuffer()
        linkEncodings.encode(currentState(for: viewer), into: &bytes)
        stateCache.store(bytes, for: viewer.scope, edition: edition, at: start.duration(to: now()))
        return bytes
    }

    /// Sends watchers an event about `link`, held by `holder`, each seeing the link as
    /// its viewer may; no work when nobody watches (the hot path).
    func emitLinkEvent(_ link: LinkID, holder: PeerCredentials, _ event: (LinkState) -> CompositorEvent) {
        guard !watchers.isEmpty else { return }
        let (snapshot, start) = shared.read { ($0.compositor.snapshot(of: link), $0.compositor.start) }
        guard let snapshot else { return }
        emit { viewer in event(LinkState(snapshot, peer: viewer.identity(of: holder), start: start)) }
    }

    /// Whose labels `viewer` may see in `decision`'s reason: a lookup of the holders of
    /// the (at most two) links it names; everyone's for a viewer who sees everyone.
    func labelVisibility(_ viewer: Viewer, of decision: Decision) -> (LinkID) -> Bool {
        if viewer.scope == .everyone { return { _ in true } }
        let named = decision.namedLinks
        guard !named.isEmpty else { return { _ in true } }
        let owners = shared.read { state in named.map { state.compositor.snapshot(of: $0)?.owner } }
        var visible: Set<LinkID> = []
        for (link, owner) in zip(named, owners) where viewer.mayIdentify(owner.flatMap { self.sessions[$0]?.peer }) {
            visible.insert(link)
        }
        return { visible.contains($0) }
    }

    /// Runs a model operation, turning its errors into gRPC statuses.
    func mapped<T>(_ body: () throws(CompositorError) -> T) throws(RPCError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .unknownDisplay: throw .status(.notFound, error.description)
            case .linkNotFound: throw .status(.notFound, error.description)
            case .sequenceNotDelivered, .sequenceTooOld, .vsyncNotOffered: throw .status(.outOfRange, error.description)
            }
        }
    }
}

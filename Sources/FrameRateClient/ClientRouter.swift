import FrameRateModel
import FrameRateProtocol
import NIOCore
import Synchronization

/// The client side of one connection's JSON-RPC session: allocates request
/// ids (integers counting up from 1), matches responses to pending calls, and
/// routes `Tick` and `Closed` notifications to links and `Event` notifications
/// to watches.
///
/// All state sits behind one `Mutex`, so calls can be enqueued from any task
/// while the channel handler delivers lines on the event loop. Completions are
/// called and streams yielded to outside the lock.
///
/// One router serves one connection (session). Links and watches are
/// ``LinkRecord``s and ``WatchRecord``s shared with the ``StreamRegistry`` of the
/// ``FrameRateConnection``, so a connection that reconnects (`keepsStreamsOnClose`)
/// can hand them to the next session's router: its router then leaves their
/// streams open when its connection closes, and on a `Closed` notification with
/// status `UNAVAILABLE` (the daemon is stopping).
final class ClientRouter: Sendable {
    /// How a call's caller waits: resumed exactly once, with the result or the reason it failed.
    typealias Reply = CheckedContinuation<Result<JSONValue, FrameRateClientError>, Never>
    /// What is called, exactly once, with a call's result or the reason it failed.
    /// Called on the event loop when the response arrives (before the next line is
    /// read), or where the call failed.
    typealias Completion = @Sendable (Result<JSONValue, FrameRateClientError>) -> Void

    /// A request sent and not answered yet.
    struct PendingCall: Sendable {
        /// Its caller.
        var completion: Completion
        /// The stream to start when it succeeds.
        var route: StreamRoute?
    }

    /// A request whose caller was cancelled: its response is still expected and ignored.
    struct AbandonedCall: Sendable {
        /// The stream it would have started; on success the link or watch is released again.
        var route: StreamRoute?
    }

    /// What the channel handler must do after a line was delivered.
    struct Delivery {
        /// Messages to write back (releasing links and watches of abandoned calls).
        var writes: [JSONRPCOutboundMessage] = []
        /// When set, the connection must close with this reason.
        var closeReason: FrameRateClientError?
    }

    private struct State: Sendable {
        var nextID: Int64 = 1
        var pending: [Int64: PendingCall] = [:]
        var abandoned: [Int64: AbandonedCall] = [:]
        /// Ids cancelled before they were enqueued. An id cancelled in the instant
        /// between its response and its caller returning also lands here and stays:
        /// one integer per such race, never reused since ids only count up.
        var cancelledEarly: Set<Int64> = []
        /// Links by their id on this connection's daemon.
        var links: [LinkID: LinkRecord] = [:]
        /// Watches by their id on this connection's daemon.
        var watches: [UInt64: WatchRecord] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    /// See ``hasDelivered``.
    private let delivered = Atomic<Bool>(false)

    /// The connection's live links and watches, across sessions.
    let registry: StreamRegistry
    /// Whether streams outlive this session (the connection reconnects).
    let keepsStreamsOnClose: Bool

    /// A router for one session of a connection whose live streams are in `registry`.
    init(registry: StreamRegistry = StreamRegistry(), keepsStreamsOnClose: Bool = false) {
        self.registry = registry
        self.keepsStreamsOnClose = keepsStreamsOnClose
    }

    /// Whether the connection has closed; every later call fails with ``FrameRateClientError/connectionClosed``.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// A fresh request id.
    func makeRequestID() -> Int64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Records call `id` as pending, or returns why it must not be sent. On
    /// refusal `route` is finished here and `reply` is not resumed.
    func enqueue(id: Int64, reply: Reply, route: StreamRoute?) -> FrameRateClientError? {
        enqueue(id: id, route: route) { reply.resume(returning: $0) }
    }

    /// Records call `id` as pending, or returns why it must not be sent. On
    /// refusal `route` is finished here and `completion` is not called.
    func enqueue(id: Int64, route: StreamRoute?, completion: @escaping Completion) -> FrameRateClientError? {
        let refusal: FrameRateClientError? = state.withLock { state in
            if state.closed { return .connectionClosed }
            if state.cancelledEarly.remove(id) != nil { return .cancelled }
            state.pending[id] = PendingCall(completion: completion, route: route)
            return nil
        }
        if refusal != nil { route?.finishUnused() }
        return refusal
    }

    /// The caller of `id` was cancelled: it fails with ``FrameRateClientError/cancelled``
    /// now, and the daemon's response is ignored when it comes.
    func cancel(id: Int64) {
        let call: PendingCall? = state.withLock { state in
            if let call = Self.abandon(id, in: &state) { return call }
            if !state.closed { state.cancelledEarly.insert(id) }
            return nil
        }
        call?.completion(.failure(.cancelled))
    }

    /// Call `id` got no answer in time: it fails with `error` now if still pending (a late
    /// response is then handled as a cancelled call's: a link or watch it starts is
    /// released again); nothing if it was answered already.
    func giveUp(id: Int64, with error: FrameRateClientError) {
        state.withLock { Self.abandon(id, in: &$0) }?.completion(.failure(error))
    }

    /// Whether call `id` is still pending: not answered, failed, given up on or cancelled.
    func isAwaitingAnswer(to id: Int64) -> Bool {
        state.withLock { $0.pending[id] != nil }
    }

    /// Takes call `id` out of the pending ones into the abandoned ones.
    private static func abandon(_ id: Int64, in state: inout State) -> PendingCall? {
        guard let call = state.pending.removeValue(forKey: id) else { return nil }
        state.abandoned[id] = AbandonedCall(route: call.route)
        return call
    }

    /// Fails call `id` with `error` if it is still pending (its request could not be written).
    func fail(id: Int64, with error: FrameRateClientError) {
        guard let call = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        call.route?.finishUnused()
        call.completion(.failure(error))
    }

    /// The record of link `link` (its id on this connection's daemon), while it is routed.
    func record(for link: LinkID) -> LinkRecord? {
        state.withLock { $0.links[link] }
    }

    /// Stops routing link `link`, recording `end` and finishing its tick stream.
    func removeLink(_ link: LinkID, end: DisplayLinkEnd) {
        state.withLock { $0.links.removeValue(forKey: link) }?.finish(end: end)
    }

    /// Stops routing watch `watch` (its id on this connection's daemon), finishing its event stream.
    func removeWatch(_ watch: UInt64) {
        state.withLock { $0.watches.removeValue(forKey: watch) }?.finish()
    }

    /// Closes the session: every pending call fails with `reason`, every stream
    /// finishes (unless ``keepsStreamsOnClose``: then they are only no longer
    /// routed here), and later calls fail with ``FrameRateClientError/connectionClosed``.
    /// Only the first call has an effect.
    func shutDown(reason: FrameRateClientError) {
        let taken = state.withLock { state -> State? in
            guard !state.closed else { return nil }
            let taken = state
            state = State(nextID: state.nextID, closed: true)
            return taken
        }
        guard let taken else { return }
        for (_, call) in taken.pending.sorted(by: { $0.key < $1.key }) {
            call.route?.finishUnused()
            call.completion(.failure(reason))
        }
        for (_, call) in taken.abandoned { call.route?.finishUnused() }
        guard !keepsStreamsOnClose else { return }
        for (_, record) in taken.links { record.finish(end: .connectionClosed) }
        for (_, record) in taken.watches { record.finish() }
    }

    /// Delivers one line from the daemon.
    func receive(line: ByteBuffer) -> Delivery {
        var delivery = Delivery()
        let inbound: JSONRPCClientInbound
        do {
            inbound = try JSONRPCClientInbound.parse(line: line)
        } catch {
            delivery.closeReason = .protocolViolation("unreadable line: \(error.message)")
            return delivery
        }
        for message in inbound.messages where delivery.closeReason == nil {
            switch message {
            case .response(let id, let result):
                if id != nil { delivered.store(true, ordering: .relaxed) }
                receiveResponse(id: id, result: result, into: &delivery)
            case .notification(let method, let params):
                if method == V1Method.tick.rawValue { delivered.store(true, ordering: .relaxed) }
                receiveNotification(method: method, params: params, into: &delivery)
            }
        }
        return delivery
    }

    /// Whether the daemon answered a request or sent a tick on this connection: a
    /// connection it accepted and closed at once (e.g. at its connection limit, with an
    /// error whose id is null) does not count (see ``ConnectionCore``'s backoff).
    var hasDelivered: Bool { delivered.load(ordering: .relaxed) }

    private enum Match {
        case pending(PendingCall, routeStarted: Bool)
        case abandoned(AbandonedCall)
        case unknown
    }

    private func receiveResponse(id: RPCID?, result: Result<JSONValue, RPCError>, into delivery: inout Delivery) {
        guard let id else {
            // The daemon could not tell which request this answers (e.g. a line too
            // long); it closes the connection after it, so every pending call gets it.
            switch result {
            case .failure(let error): delivery.closeReason = .rpc(error)
            case .success: delivery.closeReason = .protocolViolation("a successful response with id null")
            }
            return
        }
        guard case .number(let number) = id, let key = number.int64Value else {
            delivery.closeReason = .protocolViolation("a response to id \(id), which this client never sent")
            return
        }
        let match: Match = state.withLock { state in
            if let call = state.pending.removeValue(forKey: key) {
                guard let route = call.route, case .success(let value) = result else {
                    return .pending(call, routeStarted: false)
                }
                return .pending(call, routeStarted: start(route, result: value, in: &state))
            }
            if let call = state.abandoned.removeValue(forKey: key) { return .abandoned(call) }
            return .unknown
        }
        switch match {
        case .pending(let call, let routeStarted):
            if !routeStarted, let route = call.route {
                // A link invalidated (or watch ended) while its Register was in flight
                // (re-registration after a reconnect) is released at once.
                if route.hasEnded, case .success(let value) = result, let release = Self.release(route, result: value) {
                    delivery.writes.append(release)
                }
                route.finishUnused()
            }
            call.completion(result.mapError { .rpc($0) })
        case .abandoned(let call):
            guard let route = call.route else { return }
            route.finishUnused()
            if case .success(let value) = result, let release = Self.release(route, result: value) {
                delivery.writes.append(release)
            }
        case .unknown:
            delivery.closeReason = .protocolViolation("a response to id \(id), which is not awaiting an answer")
        }
    }

    /// Installs `route` under the id in `result`; `false` when the result names
    /// none, or the link or watch ended while its call was in flight.
    private func start(_ route: StreamRoute, result: JSONValue, in state: inout State) -> Bool {
        switch route {
        case .link(let record, _):
            guard let id = result["link"]?.int64Value, id > 0 else { return false }
            let link = LinkID(rawValue: UInt64(id))
            guard record.attach(router: self, daemonID: link) else { return false }
            state.links[link] = record
        case .watch(let record, _):
            guard let id = result["watch"]?.int64Value, id > 0 else { return false }
            guard record.attach(router: self, daemonID: UInt64(id)) else { return false }
            state.watches[UInt64(id)] = record
        }
        return true
    }

    /// The notification that releases what an abandoned Register or Watch created.
    private static func release(_ route: StreamRoute, result: JSONValue) -> JSONRPCOutboundMessage? {
        switch route {
        case .link:
            guard let id = result["link"]?.int64Value, id > 0 else { return nil }
            return .notification(method: V1Method.invalidate.rawValue, params: LinkRequest(link: LinkID(rawValue: UInt64(id))).jsonValue)
        case .watch:
            guard let id = result["watch"]?.int64Value, id > 0 else { return nil }
            return .notification(method: V1Method.unwatch.rawValue, params: UnwatchRequest(watch: UInt64(id)).jsonValue)
        }
    }

    private func receiveNotification(method: String, params: JSONValue?, into delivery: inout Delivery) {
        switch method {
        case V1Method.tick.rawValue:
            let tick: TickNotification
            do {
                tick = try TickNotification(json: params)
            } catch {
                delivery.closeReason = .protocolViolation("a malformed Tick: \(error.message)")
                return
            }
            // Ticks for a link this client does not route (invalidated, or registered
            // through the raw `call`) are dropped.
            state.withLock { $0.links[tick.link] }?.deliver(tick)
        case V1Method.closed.rawValue:
            let closed: LinkClosedNotification
            do {
                closed = try LinkClosedNotification(json: params)
            } catch {
                delivery.closeReason = .protocolViolation("a malformed Closed: \(error.message)")
                return
            }
            if keepsStreamsOnClose && closed.status == .unavailable {
                // The daemon is stopping: the link is registered again after the reconnect.
                state.withLock { $0.links.removeValue(forKey: closed.link) }?.detach()
            } else {
                removeLink(closed.link, end: .closedByDaemon(closed))
            }
        case V1Method.presented.rawValue:
            let frame: PresentedNotification
            do {
                frame = try PresentedNotification(json: params)
            } catch {
                delivery.closeReason = .protocolViolation("a malformed Presented: \(error.message)")
                return
            }
            state.withLock { $0.links[frame.link] }?.deliver(frame)
        case V1Method.event.rawValue:
            guard let params, let watch = params["watch"]?.int64Value, watch > 0 else {
                delivery.closeReason = .protocolViolation("an Event without a valid watch id")
                return
            }
            let event = CompositorWatchEvent(watch: UInt64(watch), params: params)
            state.withLock { $0.watches[event.watch] }?.deliver(event)
        default:
            // A notification from a newer daemon: ignored.
            break
        }
    }
}

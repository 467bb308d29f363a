import FrameRateModel
import FrameRateProtocol
import NIOCore
import NIOEmbedded

@testable import FrameRateClient

typealias CallResult = Result<JSONValue, FrameRateClientError>

extension ClientRouter {
    /// Enqueues call `id` (as `FrameRateConnection.call` does, without writing
    /// anything) and returns once it is pending; the task ends with its result.
    func startCall(id: Int64, route: StreamRoute? = nil) async -> Task<CallResult, Never> {
        let (enqueued, signal) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            await withCheckedContinuation { (reply: ClientRouter.Reply) in
                if let refusal = self.enqueue(id: id, reply: reply, route: route) {
                    reply.resume(returning: .failure(refusal))
                }
                signal.finish()
            }
        }
        for await _ in enqueued {}
        return task
    }
}

/// A link's route, its tick stream and its record, as `register` makes them.
struct TestLink {
    let ticks: AsyncStream<TickNotification>
    let record: LinkRecord
    let route: StreamRoute

    init(bufferLimit: Int = 8, registry: StreamRegistry = StreamRegistry()) {
        let (ticks, continuation) = AsyncStream.makeStream(of: TickNotification.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let range = try! FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        self.ticks = ticks
        self.record = LinkRecord(registration: RegisterRequest(range: range, highFrameRate: true), ticks: continuation, registry: registry)
        self.route = .link(record, restoring: false)
    }

    /// Every tick still buffered or yet to come, until the stream finishes.
    func collect() async -> [TickNotification] {
        var collected: [TickNotification] = []
        for await tick in ticks { collected.append(tick) }
        return collected
    }
}

/// A watch's route and its event stream.
struct TestWatch {
    let events: AsyncStream<CompositorWatchEvent>
    let route: StreamRoute

    init(bufferLimit: Int = 64, registry: StreamRegistry = StreamRegistry()) {
        let (events, continuation) = AsyncStream.makeStream(of: CompositorWatchEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        self.events = events
        self.route = .watch(WatchRecord(events: continuation, registry: registry), restoring: false)
    }

    func collect() async -> [CompositorWatchEvent] {
        var collected: [CompositorWatchEvent] = []
        for await event in events { collected.append(event) }
        return collected
    }
}

/// An `EmbeddedChannel` with the client's pipeline (line decoder, `ClientChannelHandler`)
/// around `router`, connected. `EmbeddedChannel` must stay on the thread that made
/// it, so tests build one in a synchronous stretch with no `await` inside: enqueue
/// calls first, then deliver lines here, then await the results.
func withClientChannel(
    _ router: ClientRouter, maximumLineLength: Int = NDJSONLineDecoder.defaultMaximumLineLength,
    _ body: (EmbeddedChannel) throws -> Void
) throws {
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandlers(
        ByteToMessageHandler(NDJSONLineDecoder(maximumLineLength: maximumLineLength)), ClientChannelHandler(router: router)
    )
    try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/framerated-client-test.sock")).wait()
    try body(channel)
    if channel.isActive { _ = try channel.finish(acceptAlreadyClosed: true) }
}

extension EmbeddedChannel {
    /// Delivers `lines` from the daemon, each followed by a newline, in one read.
    func deliver(_ lines: String...) throws {
        try writeInbound(ByteBuffer(string: lines.map { $0 + "\n" }.joined()))
    }

    /// Every message the client wrote, as JSON.
    func written() throws -> [JSONValue] {
        var messages: [JSONValue] = []
        while let buffer = try readOutbound(as: ByteBuffer.self) {
            for line in String(buffer: buffer).split(separator: "\n") { messages.append(try JSONValue(parsing: String(line))) }
        }
        return messages
    }
}

/// Wire lines the daemon sends.
enum Wire {
    static func result(id: Int64, _ result: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"#
    }

    static func error(id: Int64?, _ error: RPCError) -> String {
        JSONRPCOutboundMessage.response(id: id.map { .number(JSONNumber($0)) }, result: .failure(error)).jsonValue.jsonString
    }

    static func registered(id: Int64, link: UInt64) -> String {
        result(id: id, #"{"link":\#(link),"display":0,"refreshRate":120.0,"callbackRate":120.0}"#)
    }

    static func tick(link: UInt64, sequence: UInt64, skipped: UInt64 = 0) -> String {
        let tick = TickNotification(
            link: LinkID(rawValue: link), sequence: sequence, timestamp: 100 + Double(sequence) / 120,
            targetTimestamp: 100 + Double(sequence + 1) / 120, duration: 1.0 / 120, refreshRate: 120, callbackRate: 120, skipped: skipped
        )
        return JSONRPCOutboundMessage.notification(method: V1Method.tick.rawValue, params: tick.jsonValue).jsonValue.jsonString
    }

    static func closed(link: UInt64, status: GRPCStatusCode, message: String) -> String {
        let params = LinkClosedNotification(link: LinkID(rawValue: link), status: status, message: message).jsonValue
        return JSONRPCOutboundMessage.notification(method: V1Method.closed.rawValue, params: params).jsonValue.jsonString
    }

    static func event(_ event: CompositorEvent, watch: UInt64) -> String {
        JSONRPCOutboundMessage.notification(method: V1Method.event.rawValue, params: event.params(watch: watch)).jsonValue.jsonString
    }
}

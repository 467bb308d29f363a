public import FrameRateProtocol
import NIOCore

/// The daemon's answer to one ``LineSession/call(_:params:deadline:onNotification:)``.
public struct RPCReply: Sendable, Hashable {
    /// The response's `result`, or its `error`.
    public var result: Result<JSONValue, RPCError>
    /// Nanoseconds on `CLOCK_MONOTONIC` from just before the request's first byte was sent
    /// to just after the `read` that completed the response line returned.
    public var roundTripNanoseconds: Int64

    /// Builds a reply.
    public init(result: Result<JSONValue, RPCError>, roundTripNanoseconds: Int64) {
        self.result = result
        self.roundTripNanoseconds = roundTripNanoseconds
    }
}

extension LineSession {
    /// Sends one JSON-RPC request and reads lines until its response: the synchronous
    /// request helper of the low-level layer (one request in flight at a time).
    ///
    /// The request line is written by the protocol's one codec (``JSONRPCOutboundMessage``)
    /// with the next id of this session; lines are read with ``JSONRPCClientInbound``.
    /// Lines that arrive before the response stay in order:
    /// - Tick lines (recognised by ``TickLineScanner/looksLikeTick(_:)`` without parsing)
    ///   and other notifications go to `onNotification`, unparsed;
    /// - a late response to an earlier call of this session (one that timed out) is skipped;
    /// - lines after the response stay in ``buffer`` for the caller.
    ///
    /// A response with `"id": null` is taken as this call's: the daemon could not read the
    /// request.
    /// - Parameters:
    ///   - method: the full method name, e.g. `framerate.v1.DisplayLink/Register`.
    ///   - params: an object or array, or `nil` for none.
    ///   - deadline: nanoseconds on `CLOCK_MONOTONIC` (``MonotonicClock/nowNanoseconds``).
    ///   - onNotification: called with each notification line (without `\n`) read meanwhile;
    ///     the bytes are valid during the call only, and it must not use this session.
    /// - Throws: ``ClientSocketError/timedOut``, ``ClientSocketError/closed``,
    ///   ``ClientSocketError/protocolViolation(_:)`` (an unreadable line, a batch, or a
    ///   response to an id never sent), or what sending and reading throw.
    public func call(
        _ method: String, params: JSONValue? = nil, deadline: Int64,
        onNotification: (_ line: UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(ClientSocketError) -> RPCReply {
        lastRequestID += 1
        let id = lastRequestID
        var request = ByteBuffer()
        JSONRPCOutboundMessage.request(id: .number(JSONNumber(id)), method: method, params: params).writeLine(into: &request)
        let sentAt = MonotonicClock.nowNanoseconds
        let socket = self.socket
        try request.withUnsafeReadableBytes { bytes in
            Result { () throws(ClientSocketError) in try socket.send(bytes, deadline: deadline) }
        }.get()

        var receivedAt = sentAt
        while true {
            var answer: Result<JSONValue, RPCError>?
            var violation: String?
            buffer.consumeLines { line in
                if TickLineScanner.looksLikeTick(line) {
                    onNotification(line)
                    return .next
                }
                switch Self.classify(line, awaiting: id) {
                case .notification:
                    onNotification(line)
                    return .next
                case .stale:
                    return .next
                case .answer(let result):
                    answer = result
                    return .stop
                case .violation(let detail):
                    violation = detail
                    return .stop
                }
            }
            if let violation { throw .protocolViolation(violation) }
            if let answer { return RPCReply(result: answer, roundTripNanoseconds: receivedAt - sentAt) }
            guard try socket.waitUntilReadable(deadline: deadline) else { throw .timedOut }
            switch try receive() {
            case .received: receivedAt = MonotonicClock.nowNanoseconds
            case .wouldBlock: continue
            case .endOfStream: throw .closed
            }
        }
    }

    /// ``call(_:params:deadline:onNotification:)`` for a method of protocol v1.
    public func call(
        _ method: V1Method, params: JSONValue? = nil, deadline: Int64,
        onNotification: (_ line: UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(ClientSocketError) -> RPCReply {
        try call(method.rawValue, params: params, deadline: deadline, onNotification: onNotification)
    }

    /// What a line that is not a Tick means to a call waiting for the response to `id`.
    private enum LineMeaning {
        case notification
        case stale
        case answer(Result<JSONValue, RPCError>)
        case violation(String)
    }

    private static func classify(_ line: UnsafeRawBufferPointer, awaiting id: Int64) -> LineMeaning {
        let message: JSONRPCClientInbound
        do {
            message = try JSONRPCClientInbound.parse(line: line)
        } catch {
            return .violation(error.message)
        }
        switch message {
        case .batch:
            return .violation("a batch, though no batch was sent")
        case .single(.notification):
            return .notification
        case .single(.response(nil, let result)):
            return .answer(result)
        case .single(.response(let responseID?, let result)):
            if responseID == .number(JSONNumber(id)) { return .answer(result) }
            if case .number(let number) = responseID, let earlier = number.int64Value, earlier >= 1, earlier < id { return .stale }
            return .violation("a response to id \(responseID), which this session did not send")
        }
    }
}

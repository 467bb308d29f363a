public import NIOCore

extension JSONRPCInbound {
    /// Executes every request and notification with `handler` (in order) and returns the
    /// reply line, or `nil` when nothing must be sent.
    ///
    /// - A single request or invalid message gets one response line.
    /// - Notifications are executed but never answered, even when `handler` fails; those
    ///   to reserved `rpc.` methods are dropped without calling `handler`.
    /// - A batch gets one line holding the array of its responses in request order; a batch
    ///   of only notifications gets no reply at all.
    /// - An oversized batch gets one `RESOURCE_EXHAUSTED` error with id `null`, and nothing
    ///   in it is executed.
    ///
    /// The returned buffer is compact JSON followed by a single `\n`.
    public func reply(
        allocator: ByteBufferAllocator = ByteBufferAllocator(),
        handler: (_ method: String, _ params: JSONValue?) -> Result<JSONValue, RPCError>
    ) -> ByteBuffer? {
        self.reply(allocator: allocator, encodingHandler: { method, params in handler(method, params).map(MethodResult.value) })
    }

    /// A method's successful result: a value to serialize, or JSON already encoded (a
    /// cached result, spliced into the response as is).
    public enum MethodResult: Sendable {
        case value(JSONValue)
        case encoded(ByteBuffer)
    }

    /// ``reply(allocator:handler:)`` for handlers that may return already-encoded results.
    public func reply(
        allocator: ByteBufferAllocator = ByteBufferAllocator(),
        encodingHandler handler: (_ method: String, _ params: JSONValue?) -> Result<MethodResult, RPCError>
    ) -> ByteBuffer? {
        let responses = self.responses(encodingHandler: handler)
        guard !responses.isEmpty else { return nil }
        var buffer = allocator.buffer(capacity: 256)
        switch self {
        case .batch:
            JSONRPCOutboundMessage.writeBatchLine(responses, into: &buffer)
        case .single, .batchTooLarge:
            responses[0].writeLine(into: &buffer)
        }
        return buffer
    }

    /// Executes every request and notification with `handler` (in order) and returns the
    /// responses owed, in order (see ``reply(allocator:handler:)`` for the rules).
    public func responses(
        handler: (_ method: String, _ params: JSONValue?) -> Result<JSONValue, RPCError>
    ) -> [JSONRPCOutboundMessage] {
        self.responses(encodingHandler: { method, params in handler(method, params).map(MethodResult.value) })
    }

    /// ``responses(handler:)`` for handlers that may return already-encoded results.
    public func responses(
        encodingHandler handler: (_ method: String, _ params: JSONValue?) -> Result<MethodResult, RPCError>
    ) -> [JSONRPCOutboundMessage] {
        switch self {
        case .single(let message):
            return Self.respond(to: message, handler: handler).map { [$0] } ?? []
        case .batch(let messages):
            return messages.compactMap { Self.respond(to: $0, handler: handler) }
        case .batchTooLarge(let count, let limit):
            return [.response(id: nil, result: .failure(.batchTooLarge(count: count, limit: limit)))]
        }
    }

    private static func respond(
        to message: JSONRPCInboundMessage,
        handler: (String, JSONValue?) -> Result<MethodResult, RPCError>
    ) -> JSONRPCOutboundMessage? {
        switch message {
        case .request(let id, let method, let params):
            switch handler(method, params) {
            case .success(.value(let value)): return .response(id: id, result: .success(value))
            case .success(.encoded(let bytes)): return .encodedResponse(id: id, result: bytes)
            case .failure(let error): return .response(id: id, result: .failure(error))
            }
        case .notification(let method, let params):
            if !method.hasPrefix(JSONRPCInboundMessage.reservedMethodPrefix) {
                _ = handler(method, params)
            }
            return nil
        case .invalid(let id, let error):
            return .response(id: id, result: .failure(error))
        }
    }
}

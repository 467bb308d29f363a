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
        let responses = self.responses(handler: handler)
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
        handler: (String, JSONValue?) -> Result<JSONValue, RPCError>
    ) -> JSONRPCOutboundMessage? {
        switch message {
        case .request(let id, let method, let params):
            return .response(id: id, result: handler(method, params))
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

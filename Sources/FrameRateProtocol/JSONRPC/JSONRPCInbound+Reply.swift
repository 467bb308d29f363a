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
        var execution = Execution(self)
        execution.run(encodingHandler: handler, pausingWhen: { false })
        return execution.reply(allocator: allocator)
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
        var execution = Execution(self)
        execution.run(encodingHandler: handler, pausingWhen: { false })
        return execution.responses
    }

    static func respond(
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

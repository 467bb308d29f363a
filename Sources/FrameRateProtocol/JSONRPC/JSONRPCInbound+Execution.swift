public import NIOCore

extension JSONRPCInbound {
    /// One line's messages being executed, possibly over several turns of an event loop,
    /// under the rules of ``reply(allocator:encodingHandler:)``.
    ///
    /// A server that must not let one batch hold its loop runs the batch a few messages at
    /// a time: ``run(encodingHandler:pausingWhen:)`` executes messages in order until the
    /// caller's `pausingWhen` says to stop (asked after each message, so every call makes
    /// progress), and the next call goes on from there. Once ``isFinished``, ``reply(allocator:)``
    /// is the line to send: the same bytes as if the line had been executed in one go.
    public struct Execution: Sendable {
        private let inbound: JSONRPCInbound
        /// The next message of a batch to execute (a single message or an oversized batch: 0 or 1).
        private var next = 0
        /// The responses owed so far, in request order.
        public private(set) var responses: [JSONRPCOutboundMessage] = []

        public init(_ inbound: JSONRPCInbound) {
            self.inbound = inbound
        }

        /// The messages the line holds: a batch's elements, else 1.
        public var messageCount: Int {
            if case .batch(let messages) = inbound { return messages.count }
            return 1
        }

        /// How many messages have been executed (or answered without executing).
        public var executedCount: Int { next }

        /// Whether every message has been executed.
        public var isFinished: Bool { next >= messageCount }

        /// Executes messages with `handler`, in order, until every one has run or
        /// `pausingWhen` returns `true` (asked after each message).
        public mutating func run(
            encodingHandler handler: (_ method: String, _ params: JSONValue?) -> Result<MethodResult, RPCError>,
            pausingWhen shouldPause: () -> Bool
        ) {
            while !isFinished {
                switch inbound {
                case .single(let message):
                    if let response = JSONRPCInbound.respond(to: message, handler: handler) { responses.append(response) }
                case .batch(let messages):
                    if let response = JSONRPCInbound.respond(to: messages[next], handler: handler) { responses.append(response) }
                case .batchTooLarge(let count, let limit):
                    responses.append(.response(id: nil, result: .failure(.batchTooLarge(count: count, limit: limit))))
                }
                next += 1
                if !isFinished && shouldPause() { return }
            }
        }

        /// The reply line (compact JSON and one `\n`) once ``isFinished``; `nil` when
        /// nothing is owed (notifications only).
        public func reply(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer? {
            precondition(isFinished, "the line's messages have not all been executed")
            guard !responses.isEmpty else { return nil }
            var buffer = allocator.buffer(capacity: 256)
            switch inbound {
            case .batch:
                JSONRPCOutboundMessage.writeBatchLine(responses, into: &buffer)
            case .single, .batchTooLarge:
                responses[0].writeLine(into: &buffer)
            }
            return buffer
        }
    }
}

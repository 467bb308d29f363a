/// One connection of the low-level session layer: a ``ClientSocket`` and its reusable
/// ``LineBuffer``. The receive path of a load generator drives it itself:
///
/// ```swift
/// let session = try LineSession.connect(toPath: path)
/// let reply = try session.call(.register, params: request.jsonValue, deadline: MonotonicClock.nowNanoseconds + 5_000_000_000)
/// try session.socket.setNonBlocking(true)
/// // … whenever the socket is readable (epoll):
/// if case .received = try session.receive() {
///     session.buffer.consumeLines { line in
///         if let tick = TickLineScanner.scan(line) { /* account for it */ }
///         return .next
///     }
/// }
/// ```
///
/// ``call(_:params:deadline:onNotification:)`` is the synchronous request helper. The
/// async, concurrent client with streams and reconnect is ``FrameRateConnection``.
public final class LineSession {
    /// The connection.
    public let socket: ClientSocket
    /// Bytes received and not consumed yet. A body given to ``LineBuffer/consumeLines(_:)``
    /// must not use this session.
    public var buffer: LineBuffer
    /// The id of the last request sent (ids count up from 1).
    var lastRequestID: Int64 = 0

    /// A session over `socket`, with `buffer` (empty) for its input.
    public init(socket: ClientSocket, buffer: LineBuffer = LineBuffer()) {
        self.socket = socket
        self.buffer = buffer
    }

    /// Connects to the daemon at `path` (a blocking socket; see ``ClientSocket/connect(toPath:)``).
    public static func connect(toPath path: String, buffer: LineBuffer = LineBuffer()) throws(FrameRateClientError) -> LineSession {
        LineSession(socket: try ClientSocket.connect(toPath: path), buffer: buffer)
    }

    /// One `read(2)` into ``buffer``.
    @discardableResult
    public func receive() throws(ClientSocketError) -> ReadOutcome {
        try socket.read(into: &buffer)
    }

    /// The next line as text, reading (and waiting) as needed: for line-oriented pipes.
    /// - Parameter deadline: nanoseconds on `CLOCK_MONOTONIC`; `Int64.max` for none.
    /// - Returns: the line without its `\n`; at the end of the stream the unterminated rest
    ///   if any, else `nil`.
    /// - Throws: ``ClientSocketError/timedOut`` when the deadline passes first, or what reading throws.
    public func readLine(deadline: Int64 = .max) throws(ClientSocketError) -> String? {
        while true {
            var line: String?
            buffer.consumeLines { bytes in
                line = String(decoding: bytes, as: UTF8.self)
                return .stop
            }
            if let line { return line }
            guard try socket.waitUntilReadable(deadline: deadline) else { throw .timedOut }
            if try receive() == .endOfStream {
                let rest = buffer.takeRemainder()
                return rest.isEmpty ? nil : String(decoding: rest, as: UTF8.self)
            }
        }
    }
}

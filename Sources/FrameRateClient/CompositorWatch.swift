public import FrameRateProtocol

/// A compositor watch started by ``FrameRateConnection/watch(eventBufferLimit:)``.
/// Keeps its connection open while it exists.
public final class CompositorWatch: Sendable {
    /// The watch's id on the daemon.
    public let id: UInt64
    /// The compositor's state when the watch started; events follow from there.
    public let initialState: CompositorState
    /// The Watch result exactly as received (`{"watch":…,"state":{…}}`).
    public let rawResult: JSONValue
    /// The connection the watch belongs to.
    public let connection: FrameRateConnection

    /// The watch's events, in order. Buffering is bounded: the stream keeps
    /// only the newest `eventBufferLimit` undelivered events, so a consumer that
    /// falls far behind loses the oldest ones and memory never grows. Finishes
    /// after ``unwatch()`` or when the connection closes. Iterate it from one task.
    public let events: AsyncStream<CompositorWatchEvent>

    init(connection: FrameRateConnection, id: UInt64, initialState: CompositorState, rawResult: JSONValue, events: AsyncStream<CompositorWatchEvent>) {
        self.connection = connection
        self.id = id
        self.initialState = initialState
        self.rawResult = rawResult
        self.events = events
    }

    /// Ends the watch; ``events`` finishes.
    public func unwatch() async throws(FrameRateClientError) {
        try await connection.unwatch(id)
    }
}

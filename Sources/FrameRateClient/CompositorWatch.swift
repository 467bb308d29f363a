public import FrameRateProtocol

/// A compositor watch started by ``FrameRateConnection/watch(eventBufferLimit:)``.
/// Keeps its connection open while it exists.
///
/// On a connection made with `reconnect:` the watch is started again after a
/// reconnect, keeping its ``id`` and ``events`` stream; the stream then gets one
/// ``CompositorWatchEvent/resynchronizedKind`` event with the new daemon's state.
public final class CompositorWatch: Sendable {
    /// The watch's id as this application sees it: the daemon's id when it was
    /// started, kept across reconnects. Events carry this id.
    public let id: UInt64
    /// The compositor's state when the watch started; events follow from there
    /// (after a reconnect, from the state in the ``CompositorWatchEvent/resynchronizedKind`` event).
    public let initialState: CompositorState
    /// The Watch result exactly as received (`{"watch":…,"state":{…}}`).
    public let rawResult: JSONValue
    /// The connection the watch belongs to.
    public let connection: FrameRateConnection

    /// The watch's events, in order. Buffering is bounded: the stream keeps
    /// only the newest `eventBufferLimit` undelivered events, so a consumer that
    /// falls far behind loses the oldest ones and memory never grows. Finishes
    /// after ``unwatch()``, when the connection closes, or when a reconnecting
    /// connection's new daemon refuses the watch. Iterate it from one task.
    public let events: AsyncStream<CompositorWatchEvent>

    init(connection: FrameRateConnection, id: UInt64, initialState: CompositorState, rawResult: JSONValue, events: AsyncStream<CompositorWatchEvent>) {
        self.connection = connection
        self.id = id
        self.initialState = initialState
        self.rawResult = rawResult
        self.events = events
    }

    /// Ends the watch; ``events`` finishes. While a reconnecting connection is
    /// down this succeeds at once.
    public func unwatch() async throws(FrameRateClientError) {
        try await connection.unwatch(id)
    }
}

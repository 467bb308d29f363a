package import FrameRatePosix
import FrameRateProtocol
package import NIOCore

extension CompositorCore {
    /// Builds a new connection's pipeline: the partial-line timeout, the NDJSON line
    /// decoder and the session handler. The one place it is built, for the daemon's
    /// accepted connections and for the embedded test harness (FrameRateTesting).
    /// - Parameter destination: where the connection's bytes go (its socket; a channel sink in tests).
    package func addConnectionHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, peer: PeerCredentials,
        destination: @escaping @Sendable (ChannelHandlerContext) -> SocketWriter.Destination
    ) throws {
        try pipeline.addHandlers(
            PartialLineTimeoutHandler(timeout: configuration.limits.partialLineTimeout),
            ByteToMessageHandler(NDJSONLineDecoder(maximumLineLength: configuration.limits.lineLength)),
            SessionHandler(core: self, peer: peer, destination: destination)
        )
    }
}

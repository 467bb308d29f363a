package import FrameRatePosix
import FrameRateProtocol
package import NIOCore

extension CompositorCore {
    /// Builds a new connection's pipeline: the partial-line timeout, the NDJSON line
    /// decoder (with its handover mode) and the session handler. The one place it is
    /// built, for the daemon's accepted and handed-over connections and for the embedded
    /// test harness (FrameRateTesting).
    /// - Parameters:
    ///   - destination: where the connection's bytes go (its socket; a channel sink in tests).
    ///   - adopting: the session as the previous daemon handed it over (`nil`: a new connection).
    package func addConnectionHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, peer: PeerCredentials,
        destination: @escaping @Sendable (ChannelHandlerContext) -> SocketWriter.Destination,
        adopting: HandoverSession? = nil
    ) throws {
        let input = HandoverInput()
        try pipeline.addHandlers(
            PartialLineTimeoutHandler(timeout: configuration.limits.partialLineTimeout, pacer: longLineReads),
            ByteToMessageHandler(HandoverLineDecoder(maximumLineLength: configuration.limits.lineLength, input: input)),
            SessionHandler(core: self, peer: peer, destination: destination, input: input, adopting: adopting)
        )
    }
}

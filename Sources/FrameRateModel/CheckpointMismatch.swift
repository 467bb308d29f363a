/// Why a ``CompositorCheckpoint`` cannot be restored by this compositor.
public struct CheckpointMismatch: Error, Hashable, Sendable, CustomStringConvertible {
    /// What does not fit, for the log.
    public let description: String

    /// Builds a mismatch with its explanation.
    public init(_ description: String) { self.description = description }
}

import FrameRateProtocol

extension FrameRateConnection {
    /// Moves a virtual-clock daemon's time on by `seconds` (`Compositor/Advance`; the
    /// daemon runs `--clock virtual` and no unpaused link ticks). Returns the virtual now
    /// once the advance is done, seconds.
    /// - Throws: ``FrameRateClientError/rpc(_:)`` with `FAILED_PRECONDITION` on a
    ///   monotonic daemon, or while unpaused links tick (their answers move time then).
    public func advance(seconds: Double) async throws(FrameRateClientError) -> Double {
        let result = try await call(.advance, params: AdvanceRequest(seconds: seconds).jsonValue)
        return try ResultDecoding.decode(.advance) { () throws(RPCError) in
            let reader = try ParamReader(result, path: "result", allowed: nil)
            guard let now = try reader.number("now") else { throw .invalidParams(field: "now", "the Advance result has no now") }
            return now
        }
    }
}

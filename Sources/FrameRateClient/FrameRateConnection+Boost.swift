public import FrameRateModel
public import FrameRateProtocol

extension FrameRateConnection {
    /// Boosts link `link` for `duration` seconds (`DisplayLink/Boost`): until then it
    /// votes `range`, or `{max, max, max}` of its own range when `nil`. A later boost
    /// only ever moves the end later; send one per input event (a scroll) to hold the
    /// rate while it lasts. `link` is the application-visible id; a link of another
    /// connection of the same user may be boosted by its daemon id.
    /// - Parameter duration: seconds, `0 < duration <= 5` (the daemon refuses others).
    @discardableResult
    public func boost(link: LinkID, duration: Double, range: FrameRateRange? = nil) async throws(FrameRateClientError) -> BoostResult {
        if let record = core.registry.link(link) {
            return try await boost(record, duration: duration, range: range)
        }
        let result = try await call(.boost, params: BoostRequest(link: link, duration: duration, range: range).jsonValue)
        return try ResultDecoding.decode(.boost) { () throws(RPCError) in try BoostResult(json: result) }
    }

    /// Boosts the link of `record` under its current daemon-side id.
    func boost(_ record: LinkRecord, duration: Double, range: FrameRateRange?) async throws(FrameRateClientError) -> BoostResult {
        guard record.snapshot.end == nil else {
            throw .rpc(.status(.notFound, "link \(record.snapshot.id.map { "\($0.rawValue)" } ?? "?") does not exist on this connection any more"))
        }
        guard let target = record.target, let session = core.session(for: target.router) else { throw .connectionClosed }
        let params = BoostRequest(link: target.id, duration: duration, range: range).jsonValue
        let result = try await call(.boost, params: params, on: session)
        var boost = try ResultDecoding.decode(.boost) { () throws(RPCError) in try BoostResult(json: result) }
        boost.status.link = record.snapshot.id ?? boost.status.link
        return boost
    }
}

extension DisplayLinkHandle {
    /// Boosts this link for `duration` seconds (`0 < duration <= 5`): it votes `range`,
    /// or `{max, max, max}` of its own range, until the boost ends; each further boost
    /// extends it, never shortens it. Its ticks carry `boosted` meanwhile.
    @discardableResult
    public func boost(duration: Double, range: FrameRateRange? = nil) async throws(FrameRateClientError) -> BoostResult {
        try await connection.boost(record, duration: duration, range: range)
    }
}

import FrameRateProtocol

extension LineSession {
    /// Gives this connection a tick socket: asks for a token (`framerate.v1.TickSocket/Open`),
    /// connects to `path` again and sends `framerate.v1.TickSocket/Attach` with it. From
    /// then on the daemon writes this connection's `Tick` and `Presented` lines to the
    /// returned session, which it never reads, and the replies keep coming here.
    ///
    /// Call it before this connection's first `Register` (the daemon refuses it after).
    /// Read the tick socket for ticks: a tick may be read there before the reply that
    /// registered its link is read here (the daemon writes the reply first).
    /// - Parameters:
    ///   - path: the daemon's socket (the one this session is connected to).
    ///   - buffer: the tick socket's input buffer.
    ///   - deadline: nanoseconds on `CLOCK_MONOTONIC` for both calls.
    /// - Returns: the tick socket, a blocking socket with an empty buffer.
    /// - Throws: ``FrameRateClientError/rpc(_:)`` when the daemon refuses (`FAILED_PRECONDITION`
    ///   after a `Register`), or ``FrameRateClientError/connectionFailed(path:reason:)``.
    public func openTickSocket(toPath path: String, buffer: LineBuffer = LineBuffer(), deadline: Int64) throws(FrameRateClientError)
        -> LineSession
    {
        let token = try Self.result(of: { () throws(ClientSocketError) in try self.call(.openTickSocket, deadline: deadline) }, path: path)
        let opened: OpenTickSocketResult
        do {
            opened = try OpenTickSocketResult(result: token)
        } catch {
            throw .protocolViolation("the TickSocket/Open result: \(error.message)")
        }
        let ticks = try LineSession.connect(toPath: path, buffer: buffer)
        do {
            _ = try Self.result(
                of: { () throws(ClientSocketError) in
                    try ticks.call(.attachTickSocket, params: AttachTickSocketRequest(token: opened.token).jsonValue, deadline: deadline)
                },
                path: path
            )
        } catch {
            ticks.socket.close()
            throw error
        }
        return ticks
    }

    /// The result of `call`, with its failures as ``FrameRateClientError``.
    private static func result(of call: () throws(ClientSocketError) -> RPCReply, path: String) throws(FrameRateClientError) -> JSONValue {
        let reply: RPCReply
        do {
            reply = try call()
        } catch {
            throw .connectionFailed(path: path, reason: "opening a tick socket: \(error)")
        }
        switch reply.result {
        case .success(let value): return value
        case .failure(let error): throw .rpc(error)
        }
    }
}

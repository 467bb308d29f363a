import FrameRateProtocol

extension LineSession {
    /// Connects to the daemon found by the socket-path rule (`explicit` first) and checks,
    /// as ``FrameRateConnection`` does, that it runs as root, the `framerated` user or this
    /// process's own user (`SO_PEERCRED`): for tools that read a stream line by line.
    /// - Throws: ``FrameRateClientError/untrustedDaemon(path:uid:)`` when someone else answers.
    public static func connectTrusted(socketPath explicit: String?) throws(FrameRateClientError) -> LineSession {
        let path = SocketPath.discover(explicit: explicit).path
        let session = try connect(toPath: path)
        guard let uid = session.socket.peerUserID, DaemonTrust.current().trusts(uid) else {
            let uid = session.socket.peerUserID ?? UInt32.max
            session.socket.close()
            throw .untrustedDaemon(path: path, uid: uid)
        }
        return session
    }
}

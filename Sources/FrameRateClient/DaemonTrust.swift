import FrameRateProtocol
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who may answer on the daemon's socket: root, the `framerated` service user
/// (the systemd unit's `User=`), or the caller's own effective uid (a per-user
/// daemon). Anyone else could be a local user who took a socket path first and
/// is impersonating the daemon, so the client refuses to talk to them.
struct DaemonTrust: Hashable, Sendable {
    /// The service user's name, resolved with `getpwnam_r`.
    static let serviceUserName = "framerated"

    /// The caller's effective uid.
    let ownUserID: UInt32
    /// The `framerated` user's uid, or `nil` when no such user exists (then only root and the caller are trusted).
    let serviceUserID: UInt32?

    /// Whether a daemon running as `uid` is trusted.
    func trusts(_ uid: UInt32) -> Bool {
        uid == 0 || uid == ownUserID || uid == serviceUserID
    }

    /// The rule for this process: its effective uid and the `framerated` user as the system defines it now.
    static func current() -> DaemonTrust {
        DaemonTrust(ownUserID: geteuid(), serviceUserID: userID(named: serviceUserName))
    }

    /// The uid of user `name` (`getpwnam_r`), or `nil` when there is no such user.
    static func userID(named name: String) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    /// Reads who is at the other end of `channel` (`SO_PEERCRED`, through NIO,
    /// which owns the descriptor) and succeeds with the channel when this rule
    /// trusts it; otherwise closes the channel and fails with ``Refusal``.
    func verify(_ channel: any Channel) -> EventLoopFuture<any Channel> {
        guard let provider = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refusal.credentialsUnreadable("the channel has no socket options"))
        }
        let credentials: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(KernelPeerCredentials.optionLevel), name: SocketOptionName(KernelPeerCredentials.optionName)
        )
        return credentials.flatMapError { error in
            channel.eventLoop.makeFailedFuture(Refusal.credentialsUnreadable("\(error)"))
        }.flatMapThrowing { peer -> any Channel in
            guard trusts(peer.uid) else { throw Refusal.untrusted(uid: peer.uid) }
            return channel
        }.flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }

    /// Why a connected daemon was refused.
    enum Refusal: Error, Hashable {
        /// The process listening on the socket runs as `uid`, which is not trusted.
        case untrusted(uid: UInt32)
        /// `SO_PEERCRED` could not be read.
        case credentialsUnreadable(String)
    }
}

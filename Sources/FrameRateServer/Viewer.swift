import FrameRatePosix
import FrameRateProtocol

/// Who is looking at the daemon's state (`Compositor/GetState`, `Compositor/Watch` and
/// its events, the decisions in Register and Update replies), and so what it may see of
/// each link's holder: the one place that decides it (docs/security.md, "What each user sees").
///
/// Everyone sees every link: its id, display, range, paused flag, rates, limits and the
/// decisions. Who holds a link (pid, uid, command) and its label (the holder's words)
/// are shown only to the holder's own uid, and to root, the daemon's user and the admin
/// group; others see `null` there, and decision reasons name such a link without its label.
struct Viewer: Hashable, Sendable {
    /// What a viewer may see of links' holders.
    enum Scope: Hashable, Sendable {
        /// Every holder (root, the daemon's user, the admin group).
        case everyone
        /// Only the holders whose uid is this one (an unprivileged user: its own links).
        case ownUID(UInt32)
        /// No holder (a peer whose credentials could not be read).
        case nobody
    }

    /// What this viewer may see; also the key of what is encoded once for every viewer alike.
    let scope: Scope

    init(scope: Scope) { self.scope = scope }

    /// The viewer for a connection from `peer`; `isPrivileged` as the daemon decides it
    /// for changing caps (root, the daemon's user, the admin group), at the time of asking.
    init(peer: PeerCredentials, isPrivileged: Bool) {
        if isPrivileged {
            scope = .everyone
        } else if peer.uid == PeerCredentials.unknown.uid {
            // (uid_t)-1 is no user: two peers without credentials are not the same one.
            scope = .nobody
        } else {
            scope = .ownUID(peer.uid)
        }
    }

    /// Whether this viewer may see who holds a link held by `holder` (`nil`: a holder
    /// no longer connected, or unknown), and its label.
    func mayIdentify(_ holder: PeerCredentials?) -> Bool {
        mayIdentify(uid: holder?.uid)
    }

    /// Whether this viewer may see who holds a link held by user `uid` (`nil`: unknown).
    func mayIdentify(uid holder: UInt32?) -> Bool {
        switch scope {
        case .everyone: return true
        case .nobody: return false
        case .ownUID(let uid):
            guard let holder, holder != PeerCredentials.unknown.uid else { return false }
            return holder == uid
        }
    }

    /// A trace record as this viewer may see it (records are made once for every trace):
    /// another user's link without its holder or label, and decision reasons without labels.
    func shown(_ record: TraceRecord) -> TraceRecord {
        guard scope != .everyone else { return record }
        switch record {
        case .linkAdded(let display, let at, var link) where !mayIdentify(uid: link.peer?.uid):
            link.peer = nil
            link.label = nil
            return .linkAdded(display: display, at: at, link)
        case .decision(let display, let at, let rate, let rule, _, let withoutLabels):
            return .decision(display: display, at: at, rate: rate, rule: rule, reason: withoutLabels ?? "", reasonWithoutLabels: withoutLabels)
        default:
            return record
        }
    }

    /// The holder's identity as this viewer sees it: `nil` when hidden. A holder that is
    /// gone shows as ``PeerCredentials/unknown`` to a viewer who sees everyone.
    func identity(of holder: PeerCredentials?) -> PeerIdentity? {
        guard mayIdentify(holder) else { return nil }
        return (holder ?? .unknown).identity
    }
}

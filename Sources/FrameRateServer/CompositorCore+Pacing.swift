import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging

extension CompositorCore {
    /// How long `session`'s next request must wait (its user is over its share of the
    /// control loop or its reply rate, ``UserPacing``; always positive), or `nil` to handle
    /// it now. Root, the daemon's user and the admin group are never paced. The journal
    /// hears of it (at most one line per user per 10 s, with how often it was paced since).
    func pacingDelay(of session: Session) -> Duration? {
        guard !session.isPrivileged else { return nil }
        let now = wallNow()
        guard let resumption = pacing.resumption(of: session.peer.uid, at: now) else { return nil }
        let delay = now.duration(to: resumption)
        if case .log(let suppressed) = pacingLogs.admit(uid: session.peer.uid, at: now) {
            let limits = configuration.limits.pacing
            let waitMilliseconds = (WireTime.nanoseconds(of: delay) + 999_999) / 1_000_000
            let message =
                "requests paced for \(waitMilliseconds) ms: uid \(session.peer.uid) is over its share "
                + "of the control loop (\(FrameRateMath.format((limits.loopShare * 1000).rounded() / 10)) %, --max-loop-share-per-user) or its "
                + "reply rate (\(limits.replyBytesPerSecond) bytes/s, --max-reply-rate-per-user); its requests wait, none is refused"
                + (suppressed > 0 ? " (paced \(suppressed) more times since the last line)" : "")
            logger.info(
                "\(message)",
                metadata: peerMetadata(session.peer).merging(["event": "requests-paced"]) { $1 }
            )
        }
        return delay
    }

    /// Whether `session`'s next request must wait because its user has
    /// ``UnreadReplyLimit/limit`` other connections holding replies unread or still to
    /// come; it is resumed once one of them drains, finishes its line or closes. Root, the daemon's user and the admin
    /// group never wait. The journal hears of it (at most one line per user per 10 s).
    func mustWaitForUnreadReplies(_ session: Session) -> Bool {
        guard !session.isPrivileged, unreadReplies.mustWait(session.owner, uid: session.peer.uid) else { return false }
        if case .log(let suppressed) = unreadReplyLogs.admit(uid: session.peer.uid, at: wallNow()) {
            let message =
                "requests wait: uid \(session.peer.uid) has \(unreadReplies.unreadCount(of: session.peer.uid)) connections that have not read "
                + "what they were sent or have a batch under way (at most \(unreadReplies.limit) a user); its other connections' requests "
                + "wait until one reads, finishes or closes, none is refused" + (suppressed > 0 ? " (\(suppressed) more waits since the last line)" : "")
            logger.info("\(message)", metadata: peerMetadata(session.peer).merging(["event": "requests-wait-unread"]) { $1 })
        }
        return true
    }

    /// `session` finished a line or paused one between turns (`lineInProgress`): a paused
    /// line's reply is still to come, and a finished one may have left the writer above its
    /// high-water mark. Both count against the user's limit (``UnreadReplyLimit``), the
    /// latter now rather than when the writer's report reaches the loop, so the
    /// connections handled later in the same turn see it.
    func noteReplyPending(_ session: Session, lineInProgress: Bool) {
        guard !session.isPrivileged else { return }
        if !session.isWritable { _ = unreadReplies.writabilityChanged(of: session.owner, uid: session.peer.uid, writable: false) }
        resume(unreadReplies.lineInProgress(of: session.owner, uid: session.peer.uid, lineInProgress))
    }

    /// Charges `session`'s user for one request: `loopTime` of the control loop and
    /// `replyBytes` of reply (privileged users are not charged).
    func charge(_ session: Session, loopTime: Duration, replyBytes: Int) {
        guard !session.isPrivileged else { return }
        pacing.charge(session.peer.uid, loopTime: loopTime, replyBytes: replyBytes, at: wallNow())
    }
}

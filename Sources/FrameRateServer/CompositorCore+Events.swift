package import FrameRateModel
import FrameRatePosix
package import FrameRateProtocol
import Logging
import NIOCore

extension CompositorCore {
    /// A display's rate changed at the vsync `at` (reported by the tick plane, hopped here).
    /// Watchers' events carry that vsync's time, not this call's: the hop, or a late
    /// wake-up that passed over the vsync, may come a period or more after it.
    package func refreshRateChanged(display: DisplayID, change: RefreshRateChange, at vsync: MonotonicClock.Instant) {
        let decision = change.decision
        logger.info(
            "display \(display.rawValue) refresh rate \(FrameRateMath.format(change.from)) -> \(FrameRateMath.format(change.to)) Hz: \(change.reason)",
            metadata: [
                "event": "refresh-rate-changed", "display": "\(display.rawValue)",
                "from_hz": "\(FrameRateMath.format(change.from))", "to_hz": "\(FrameRateMath.format(change.to))",
                "reason": "\(change.reason)", "rule": "\(decision.rule.rawValue)",
                "deciders": "\(Self.journalList(decision.deciders, count: decision.deciderCount))",
                "cap": "\(decision.cap.map { "\($0.kind.rawValue) \(FrameRateMath.format($0.rate)) Hz" } ?? "none")",
            ]
        )
        if !watchers.isEmpty {
            // The start is fixed for the daemon's life; no pending change in an event's decision.
            let start = shared.read { $0.compositor.start }
            let at = vsync.seconds
            emit { viewer in
                let showingLabel = self.labelVisibility(viewer, of: decision)
                return .refreshRateChanged(
                    display: display, from: change.from, to: change.to, reason: decision.reason(showingLabelOf: showingLabel),
                    decision: DecisionState(decision, start: start, showingLabelOf: showingLabel), at: at
                )
            }
        }
        publishStatus()
    }

    /// A journal field's value for a list of links: `3 7` (space-separated ids), `none`
    /// when empty, `… (+N more)` when the decision lists fewer than `count`.
    static func journalList(_ links: [LinkID], count: Int) -> String {
        guard !links.isEmpty else { return "none" }
        let listed = links.map { String($0.rawValue) }.joined(separator: " ")
        return count > links.count ? "\(listed) (+\(count - links.count) more)" : listed
    }

    /// Sends `event` to every watch. A watcher whose connection is not reading loses
    /// events rather than growing the daemon's memory; it can resynchronise with GetState.
    func emit(_ event: CompositorEvent) {
        emit { _ in event }
    }

    /// Sends every watch the event as its viewer may see it (``Viewer``): `event` runs,
    /// and its fields are serialized, once per viewer scope among the watchers
    /// (``EncodedCompositorEvent``); each watch's line is that copy with its own watch id,
    /// and a connection's watches get theirs in one write. The cost is bounded by the watch
    /// limits (16 per connection, 64 per unprivileged user).
    func emit(_ event: (Viewer) -> CompositorEvent) {
        guard !watchers.isEmpty else { return }
        let allocator = ByteBufferAllocator()
        var encoded: [Viewer.Scope: EncodedCompositorEvent] = [:]
        var lines: [ObjectIdentifier: (session: Session, buffer: ByteBuffer)] = [:]
        for (watch, session) in watchers where session.isWritable {
            let viewer = viewer(of: session)
            let shown = encoded[viewer.scope] ?? EncodedCompositorEvent(event(viewer), allocator: allocator)
            encoded[viewer.scope] = shown
            let key = ObjectIdentifier(session)
            // Room for a line to each of the connection's watches (a viewer's scope is the
            // connection's, so they all get lines of this length).
            var pending = lines.removeValue(forKey: key) ?? (session, allocator.buffer(capacity: shown.lineLengthBound * session.watches.count))
            shown.writeLine(watch: watch, into: &pending.buffer)
            lines[key] = pending
        }
        for (session, buffer) in lines.values { session.write(buffer) }
    }

    /// Graceful stop (after the tick plane has stopped): refuse new work, tell every client
    /// its links are closed (`UNAVAILABLE`), close every connection.
    /// - Returns: a future that completes once every connection is closed.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        lifecycle = .stopping
        let linkCount = shared.read { $0.compositor.linkCount }
        logger.notice(
            "daemon stopping: closing \(linkCount) links on \(sessions.count) connections",
            metadata: ["event": "daemon-stopping"]
        )
        var closed: [EventLoopFuture<Void>] = []
        for session in sessions.values {
            let links = shared.read { $0.compositor.links(of: session.owner) }.map(\.link).sorted()
            var buffer = session.context.channel.allocator.buffer(capacity: 128 * max(1, links.count))
            for link in links {
                JSONRPCOutboundMessage.notification(
                    method: V1Method.closed.rawValue,
                    params: LinkClosedNotification(link: link, status: .unavailable, message: "framerated is shutting down").jsonValue
                ).writeLine(into: &buffer)
            }
            if buffer.readableBytes > 0 { session.write(buffer) }
            // Whatever the socket did not take now is lost: a client that stopped reading
            // must not hold up the shutdown.
            session.writer.flush()
            let promise = eventLoop.makePromise(of: Void.self)
            session.context.close(promise: promise)
            closed.append(promise.futureResult.recover { _ in })
        }
        return EventLoopFuture.andAllComplete(closed, on: eventLoop)
    }
}

extension CompositorCore {
    /// The tick plane reached a deadline `lateness` after it was due (at least a vsync
    /// period: reported by the tick plane, hopped here). `busy` is how long past that
    /// deadline it was still sending the previous vsync's ticks (`nil`: it had finished in
    /// time and the wake-up itself came late). The links whose ticks were due meanwhile
    /// report the vsyncs it passed over in `skipped`; the journal says why, at most
    /// ``RejectionLogLimiter/defaultBurst`` lines per ``RejectionLogLimiter/defaultWindow``,
    /// each with the count since start.
    package func tickPlaneLate(lateness: Duration, busy: Duration?) {
        lateWakeTotal &+= 1
        guard case .log(let suppressed) = lateWakeLog.admit(at: now()) else { return }
        let late = Self.milliseconds(lateness)
        var metadata: Logger.Metadata = ["event": "tick-plane-late", "late_ms": "\(late)", "total": "\(lateWakeTotal)", "suppressed": "\(suppressed)"]
        let why: String
        if let busy {
            let busyMilliseconds = Self.milliseconds(busy)
            metadata["cause"] = "busy"
            metadata["busy_ms"] = "\(busyMilliseconds)"
            why = "reached a vsync \(late) ms late: it was still sending the previous vsync's ticks \(busyMilliseconds) ms after it"
        } else {
            metadata["cause"] = "woke-late"
            why = "woke \(late) ms after it was due"
        }
        logger.notice(
            "the tick plane \(why): the vsyncs it passed over show in the next ticks' skipped (late \(lateWakeTotal) time(s) since start)",
            metadata: metadata
        )
    }

    /// `link` of `display` has waited 1 s for its client to answer its latest tick (reported
    /// by the tick plane, hopped here): watchers get the link's state, whose `awaitingFrame`
    /// names the tick, as `linkUpdated`; the journal says why it gets no ticks, at most 10
    /// lines per user per 10 s (``UserRejectionLogs``). Nothing when the wait ended
    /// meanwhile (answered, paused, invalidated, or its connection gone).
    package func linkHeldBack(display: DisplayID, _ link: HeldBackLink) {
        guard let session = sessions[link.owner] else { return }
        let snapshot = shared.read { $0.compositor.snapshot(of: link.link) }
        guard let snapshot, snapshot.awaitedFrame?.sequence == link.frame.sequence else { return }
        emitLinkEvent(link.link, holder: session.peer) { .linkUpdated(display: display, link: $0) }
        announcedHeldBack[link.link] = (link.frame.sequence, false)
        guard case .log(let suppressed) = heldBackLogs.admit(uid: session.peer.uid, at: wallNow()) else { return }
        announcedHeldBack[link.link] = (link.frame.sequence, true)
        // As measured at the vsync that reported it, like the interval count.
        let waited = Self.milliseconds(link.waited)
        let note = UserRejectionLogs<MonotonicClock.Instant>.note(suppressed: suppressed, uid: session.peer.uid, kind: .heldBackLink)
        let why = "its client has not answered tick \(link.frame.sequence) for \(waited) ms (\(link.frame.skippedIntervals) intervals so far)"
        logger.info(
            "\(Self.name(link.link, snapshot)) on display \(display.rawValue) gets no ticks: \(why); a link that sends FrameDone or Present must answer every tick it gets\(note)",
            metadata: peerMetadata(session.peer).merging(
                [
                    "event": "link-held-back", "link": "\(link.link.rawValue)", "display": "\(display.rawValue)",
                    "sequence": "\(link.frame.sequence)", "waited_ms": "\(waited)", "suppressed": "\(suppressed)",
                ]
            ) { $1 }
        )
    }

    /// `link` of `display` ticks again after a wait ``linkHeldBack(display:_:)`` announced
    /// (reported by the tick plane, hopped here; the hops of one link arrive in order):
    /// watchers get the link's state as `linkUpdated` (normally without `awaitingFrame`
    /// now), and, if the wait's journal line was logged, the journal says it ended. That
    /// line is not counted again against the per-user limit: it pairs with one that was.
    /// Nothing for a wait that was not announced (it ended before the control loop heard
    /// of it; an entry left by an earlier wait, which a pause ended unannounced, names
    /// another tick), or when the link or its connection is gone.
    package func linkResumed(display: DisplayID, _ link: ResumedLink) {
        guard let announced = announcedHeldBack.removeValue(forKey: link.link), announced.awaited == link.awaited,
            let session = sessions[link.owner]
        else { return }
        guard let snapshot = shared.read({ $0.compositor.snapshot(of: link.link) }) else { return }
        emitLinkEvent(link.link, holder: session.peer) { .linkUpdated(display: display, link: $0) }
        guard announced.logged else { return }
        let waited = Self.milliseconds(link.waited)
        logger.info(
            "\(Self.name(link.link, snapshot)) on display \(display.rawValue) ticks again: its client answered, and tick \(link.sequence) came \(waited) ms after the tick it waited on",
            metadata: peerMetadata(session.peer).merging(
                [
                    "event": "link-resumed", "link": "\(link.link.rawValue)", "display": "\(display.rawValue)",
                    "sequence": "\(link.sequence)", "waited_ms": "\(waited)",
                ]
            ) { $1 }
        )
    }

    /// `link 3 'scroller'`: the label is the client's words, which the log handlers sanitize
    /// with the whole message.
    private static func name(_ link: LinkID, _ snapshot: LinkSnapshot) -> String {
        "link \(link.rawValue)" + (snapshot.configuration.label.map { " '\($0)'" } ?? "")
    }

    /// A fan-out thread's io_uring failed while sending (reported by the tick plane, hopped
    /// here): that thread sends with `send(2)` from now on; the sends of the failed batch
    /// whose outcome is unknown closed their connections.
    package func tickSendsFellBack(reason: String) {
        logger.warning("\(reason)", metadata: ["event": "tick-send-path", "path": "\(BatchSender.Path.sendCalls.rawValue)"])
    }

    /// `duration` in milliseconds with one decimal ("8.5").
    private static func milliseconds(_ duration: Duration) -> String {
        let tenths = FrameRateMath.wholeNumber(Swift.max(0, (duration / .microseconds(100)).rounded()), clampedTo: 0...UInt64.max)
        return "\(tenths / 10).\(tenths % 10)"
    }
}

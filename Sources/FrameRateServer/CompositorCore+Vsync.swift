import FrameRateModel
import FrameRateProtocol
import Logging
import NIOCore

extension CompositorCore {
    /// Arms `display`'s timer for its next vsync (a `CLOCK_MONOTONIC` deadline, as NIO's are on Linux).
    func scheduleVsync(of display: DisplayID) {
        guard lifecycle == .running, let next = try? compositor.nextVsync(of: display) else { return }
        vsyncTimers[display] = eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(UInt64(max(0, next.nanoseconds)))) {
            self.vsync(of: display)
        }
    }

    /// One vsync of `display`: apply a due rate change, fan the due ticks out to their
    /// connections (one write per connection), arm the next vsync.
    ///
    /// Ticks for a connection that is not writable are not encoded at all; the model
    /// counts them in that link's next `skipped`.
    func vsync(of display: DisplayID) {
        guard lifecycle == .running else { return }
        let sessions = self.sessions
        let report: VsyncReport<MonotonicClock.Instant>
        do {
            report = try compositor.vsync(of: display, at: MonotonicClock.now) { owner in sessions[owner]?.isWritable ?? false }
        } catch {
            logger.critical("vsync of unknown display \(display.rawValue): \(error)")
            return
        }
        if let change = report.rateChange { refreshRateChanged(display: display, change: change) }
        fanOut(report.ticks)
        vsyncObserver?()
        scheduleVsync(of: display)
    }

    private func fanOut(_ ticks: [Tick<MonotonicClock.Instant>]) {
        guard !ticks.isEmpty else { return }
        let allocator = ByteBufferAllocator()
        // Fields shared by every tick of one cadence at this vsync, encoded once.
        var shared: [(target: MonotonicClock.Instant, fields: ByteBuffer)] = []
        var touched: [Session] = []
        var current: Session?
        for tick in ticks {
            if current?.owner != tick.owner { current = sessions[tick.owner] }
            guard let session = current else { continue }
            let fields: ByteBuffer
            if let cached = shared.first(where: { $0.target == tick.targetTimestamp }) {
                fields = cached.fields
            } else {
                fields = TickLineEncoder.sharedFields(
                    timestamp: tick.timestamp.nanoseconds, targetTimestamp: tick.targetTimestamp.nanoseconds,
                    duration: WireTime.nanoseconds(of: tick.duration), refreshRate: tick.refreshRate,
                    callbackRate: tick.callbackRate, allocator: allocator
                )
                shared.append((tick.targetTimestamp, fields))
            }
            if session.pendingTicks == nil {
                session.pendingTicks = allocator.buffer(capacity: 256 * max(1, session.links.count))
                touched.append(session)
            }
            TickLineEncoder.write(
                link: tick.link.rawValue, sequence: tick.sequence, skipped: tick.skipped, shared: fields,
                into: &session.pendingTicks!
            )
        }
        for session in touched {
            if let buffer = session.pendingTicks { session.write(buffer) }
            session.pendingTicks = nil
        }
    }

    private func refreshRateChanged(display: DisplayID, change: RefreshRateChange) {
        logger.info(
            "display \(display.rawValue) refresh rate \(FrameRateMath.format(change.from)) -> \(FrameRateMath.format(change.to)) Hz: \(change.reason)",
            metadata: [
                "event": "refresh-rate-changed", "display": "\(display.rawValue)",
                "from_hz": "\(FrameRateMath.format(change.from))", "to_hz": "\(FrameRateMath.format(change.to))",
                "reason": "\(change.reason)",
            ]
        )
        emit(.refreshRateChanged(display: display, from: change.from, to: change.to, reason: change.reason))
        publishStatus()
    }

    /// Sends `event` to every watch. A watcher that is not reading loses events
    /// rather than growing the daemon's memory; it can resynchronise with GetState.
    func emit(_ event: CompositorEvent) {
        guard !watchers.isEmpty else { return }
        let allocator = ByteBufferAllocator()
        for (watch, session) in watchers where session.isWritable {
            var buffer = allocator.buffer(capacity: 256)
            JSONRPCOutboundMessage.notification(method: V1Method.event.rawValue, params: event.params(watch: watch))
                .writeLine(into: &buffer)
            session.write(buffer)
        }
    }

    /// Graceful stop: refuse new work, tell every client its links are closed
    /// (`UNAVAILABLE`), flush, close every connection.
    /// - Returns: a future that completes once every connection is closed.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        lifecycle = .stopping
        for timer in vsyncTimers.values { timer.cancel() }
        vsyncTimers = [:]
        logger.notice(
            "daemon stopping: closing \(compositor.linkCount) links on \(sessions.count) connections",
            metadata: ["event": "daemon-stopping"]
        )
        var closed: [EventLoopFuture<Void>] = []
        for session in sessions.values {
            var buffer = session.context.channel.allocator.buffer(capacity: 128 * max(1, session.links.count))
            for link in session.links.keys.sorted() {
                JSONRPCOutboundMessage.notification(
                    method: V1Method.closed.rawValue,
                    params: LinkClosedNotification(link: link, status: .unavailable, message: "framerated is shutting down").jsonValue
                ).writeLine(into: &buffer)
            }
            let context = session.context
            let promise = eventLoop.makePromise(of: Void.self)
            if buffer.readableBytes == 0 {
                context.close(promise: promise)
            } else {
                context.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in
                    context.close(promise: promise)
                }
            }
            closed.append(promise.futureResult.recover { _ in })
        }
        return EventLoopFuture.andAllComplete(closed, on: eventLoop)
    }
}

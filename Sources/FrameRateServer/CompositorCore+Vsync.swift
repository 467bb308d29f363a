import FrameRateModel
import FrameRateProtocol
import Logging
import NIOCore

/// The ticks of one vsync being written, possibly over several turns of the event loop.
struct FanOut {
    /// The display whose vsync this is.
    let display: DisplayID
    /// The ticks, in link registration order.
    let ticks: [Tick<MonotonicClock.Instant>]
    /// The first tick not written yet.
    var next = 0
    /// Fields shared by every tick of one cadence at this vsync, encoded once.
    var shared: [(target: MonotonicClock.Instant, fields: ByteBuffer)] = []
    /// Connections holding several links, written once all their lines are collected.
    var touched: [Session] = []
}

extension CompositorCore {
    /// How long the fan-out runs between checks for waiting requests, nanoseconds. When one
    /// waits, the fan-out lets the loop serve it and goes on ``yieldDelay`` later, so a
    /// control call waits at most about this long even when a vsync's fan-out takes longer
    /// than a period (thousands of connections). With no request waiting it never stops.
    static let fanOutSlice: Int64 = 250_000

    /// The wait before a task that must let the loop read its sockets first. NIO runs every
    /// due task before it polls again, so the continuation must not be due when NIO checks
    /// (after this task returns and is released: 10 µs was measured to be too short); with
    /// a request waiting, NIO's poll returns at once and serves it.
    static let yieldDelay = TimeAmount.microseconds(100)

    /// Arms `display`'s timer for its next vsync (a `CLOCK_MONOTONIC` deadline, as NIO's are on Linux).
    ///
    /// After a vsync that overran its period the next one is already due, and NIO would
    /// run it before reading any socket; if a request waits, the vsync runs ``yieldDelay``
    /// after it is served instead (the model counts the vsyncs missed meanwhile).
    func scheduleVsync(of display: DisplayID) {
        guard lifecycle == .running, let next = try? compositor.nextVsync(of: display) else { return }
        var deadline = NIODeadline.uptimeNanoseconds(UInt64(max(0, next.nanoseconds)))
        let now = eventLoop.now
        if deadline <= now, inputMonitor?.hasInput == true { deadline = now + Self.yieldDelay }
        vsyncTimers[display] = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
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
        let unwritable = unwritableOwners
        let report: VsyncReport<MonotonicClock.Instant>
        do {
            report = try compositor.vsync(of: display, at: MonotonicClock.now) { owner in
                unwritable.isEmpty || !unwritable.contains(owner)
            }
        } catch {
            logger.critical("vsync of unknown display \(display.rawValue): \(error)")
            return
        }
        if let change = report.rateChange { refreshRateChanged(display: display, change: change) }
        continueFanOut(FanOut(display: display, ticks: report.ticks))
    }

    /// Writes the ticks of `fanOut`, then arms the next vsync; if a request arrives meanwhile,
    /// lets the loop serve it and continues ``yieldDelay`` later.
    private func continueFanOut(_ fanOut: FanOut) {
        guard lifecycle == .running else { return }
        var fanOut = fanOut
        if writeTicks(of: &fanOut) {
            vsyncObserver?()
            scheduleVsync(of: fanOut.display)
        } else {
            vsyncTimers[fanOut.display] = eventLoop.assumeIsolated().scheduleTask(deadline: eventLoop.now + Self.yieldDelay) {
                self.continueFanOut(fanOut)
            }
        }
    }

    /// Encodes and writes ticks of `fanOut` until all are written or, checked every
    /// ``fanOutSlice``, a request waits on some connection.
    ///
    /// A connection holding one link gets its line as soon as it is encoded (into one
    /// scratch buffer reused for every such line, so it stays in cache): the first
    /// connections hear their tick while the rest are still being encoded. A connection
    /// holding several collects every line of this vsync in its own buffer and is
    /// written at the end. Cost per tick: one array lookup when the owner differs from
    /// the previous tick's, the line's bytes, one `send`; nothing allocated (the shared
    /// segments are a few per vsync).
    /// - Returns: whether every tick is written.
    private func writeTicks(of fanOut: inout FanOut) -> Bool {
        let allocator = ByteBufferAllocator()
        var line = fanOutLine ?? allocator.buffer(capacity: 512)
        fanOutLine = nil
        defer { fanOutLine = line }
        var lastShared = 0
        var current: Session?
        var currentOwner = OwnerID(rawValue: 0)
        var single = false
        let start = fanOut.next
        var checkAt = MonotonicClock.now.nanoseconds + Self.fanOutSlice
        while fanOut.next < fanOut.ticks.count {
            if (fanOut.next - start) & 31 == 31 {
                let now = MonotonicClock.now.nanoseconds
                if now >= checkAt {
                    if inputMonitor?.hasInput == true { return false }
                    checkAt = now + Self.fanOutSlice
                }
            }
            let tick = fanOut.ticks[fanOut.next]
            fanOut.next += 1
            if tick.owner != currentOwner {
                currentOwner = tick.owner
                current = sessions[tick.owner]
                if let session = current {
                    // One link: this is the connection's only tick of the vsync.
                    single = session.linkCount == 1
                    if !single && !session.hasPendingTicks {
                        session.beginTicks()
                        fanOut.touched.append(session)
                    }
                }
            }
            guard let session = current else { continue }
            if lastShared >= fanOut.shared.count || fanOut.shared[lastShared].target != tick.targetTimestamp {
                if let index = fanOut.shared.firstIndex(where: { $0.target == tick.targetTimestamp }) {
                    lastShared = index
                } else {
                    fanOut.shared.append(
                        (
                            tick.targetTimestamp,
                            TickLineEncoder.sharedFields(
                                timestamp: tick.timestamp.nanoseconds, targetTimestamp: tick.targetTimestamp.nanoseconds,
                                duration: WireTime.nanoseconds(of: tick.duration), refreshRate: tick.refreshRate,
                                callbackRate: tick.callbackRate, allocator: allocator
                            )
                        )
                    )
                    lastShared = fanOut.shared.count - 1
                }
            }
            if single {
                line.clear()
                TickLineEncoder.write(
                    link: tick.link.rawValue, sequence: tick.sequence, skipped: tick.skipped, shared: fanOut.shared[lastShared].fields,
                    into: &line
                )
                session.send(line)
            } else {
                TickLineEncoder.write(
                    link: tick.link.rawValue, sequence: tick.sequence, skipped: tick.skipped, shared: fanOut.shared[lastShared].fields,
                    into: &session.tickBuffer
                )
            }
        }
        for session in fanOut.touched { session.flushTicks() }
        return true
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

import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import Logging
import NIOCore

/// `framerate.v1.Compositor/Trace`: a connection asks for a recording of what the daemon
/// does; the records (``TraceRecord``) are buffered per trace (``TraceRecorder``, bounded)
/// and sent every ``traceFlushInterval`` as `TraceRecords` notifications, until
/// `StopTrace` or the connection closes. A connection that does not read them fills its
/// writer, is skipped by the flush, and its records past the buffer are counted as lost.
extension CompositorCore {
    /// How often running traces are sent their records: 100 ms.
    static let traceFlushInterval = TimeAmount.milliseconds(100)
    /// Records per `TraceRecords` line (a tick record is about 100 bytes).
    static let recordsPerNotification = 1024
    /// Traces running at once in the daemon.
    static let traceLimit = 8
    /// Traces an unprivileged user may run at once: a trace makes the tick plane record
    /// every tick, so one user must not be able to take every slot or multiply that work.
    static let traceLimitPerUser = 1
    /// Records written to all traces together in one turn of the control loop. A trace with
    /// 1,000 links at 120 Hz gathers 12,000 records between two flushes; written in one
    /// task, they held the loop so long that other users' Health/Check p99 was 19 to 46 ms
    /// in three runs, and 5 to 7 ms with this bound (docs/performance-log.md). What is left
    /// waits in the trace's backlog and goes out 1 ms later, after the loop has served its
    /// sockets; a trace whose backlog is not written does not take more from the recorder,
    /// whose bounded buffer counts what it cannot keep as lost.
    static let traceRecordsPerTurn = 2048

    func startTrace(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        _ = try ParamReader(params, allowed: [])
        guard !traces.values.contains(session.owner) else {
            throw .status(.resourceExhausted, "this connection already runs a trace; stop it (StopTrace) or use another connection")
        }
        if !session.isPrivileged {
            let held = traces.values.filter { sessions[$0]?.peer.uid == session.peer.uid }.count
            guard held < Self.traceLimitPerUser else {
                throw .status(
                    .resourceExhausted,
                    "uid \(session.peer.uid) already runs \(held) trace (the per-user limit for unprivileged users); stop it first"
                )
            }
        }
        guard traces.count < Self.traceLimit else {
            throw .status(.resourceExhausted, "framerated already runs \(Self.traceLimit) traces (the limit); try again when one ends")
        }
        lastTrace += 1
        let trace = lastTrace
        traces[trace] = session.owner
        shared.tracer.start(trace)
        if traceFlush == nil {
            let loop = NIOLoopBound(self, eventLoop: eventLoop)
            traceFlush = eventLoop.scheduleRepeatedTask(initialDelay: Self.traceFlushInterval, delay: Self.traceFlushInterval) { _ in
                loop.value.flushTraces()
            }
        }
        logLimited("trace \(trace) started", level: .info, session: session, metadata: ["event": "trace-started"], limits: &traceLogs, kind: .traceStarted)
        return ["trace": JSONValue(trace), "state": currentState(for: viewer(of: session)).jsonValue]
    }

    func stopTrace(_ params: JSONValue?, session: Session) throws(RPCError) -> JSONValue {
        let reader = try ParamReader(params, allowed: ["trace"])
        let trace = UInt64(try reader.requiredInteger("trace", minimum: 1))
        guard traces[trace] == session.owner else {
            throw .status(.notFound, "trace \(trace) does not run on this connection")
        }
        // Everything the trace recorded goes out before the reply: its backlog, if any, then
        // what the recorder holds (each bounded by the recorder's buffer); the stopping
        // user's request pays for it.
        if session.isWritable {
            _ = flush(trace, to: session, budget: .max)
            _ = flush(trace, to: session, budget: .max)
        }
        endTrace(trace)
        return .object([:])
    }

    /// Ends every trace of a closing connection.
    func endTraces(of owner: OwnerID) {
        for trace in traces.compactMap({ $0.value == owner ? $0.key : nil }) { endTrace(trace) }
    }

    private func endTrace(_ trace: UInt64) {
        traces[trace] = nil
        traceBacklogs[trace] = nil
        shared.tracer.stop(trace)
        if traces.isEmpty {
            traceFlush?.cancel()
            traceFlush = nil
        }
    }

    /// Sends each running trace its records so far, to connections that keep up: at most
    /// ``traceRecordsPerTurn`` records in all, shared among the traces with records to
    /// send; if any are left, it runs again 1 ms later.
    func flushTraces() {
        let writable = traces.compactMap { trace, owner in sessions[owner].flatMap { $0.isWritable ? (trace, $0) : nil } }
            .sorted { $0.0 < $1.0 }
        guard !writable.isEmpty else { return }
        let share = Swift.max(Self.recordsPerNotification, Self.traceRecordsPerTurn / writable.count)
        var more = false
        for (trace, session) in writable where flush(trace, to: session, budget: share) { more = true }
        if more { continueInLaterTurn(.traceFlush) }
    }

    /// Writes up to `budget` of `trace`'s records to `session`: its backlog first, else what
    /// the recorder holds, each record as the session's viewer may see it.
    /// - Returns: whether records are left in the trace's backlog.
    func flush(_ trace: UInt64, to session: Session, budget: Int) -> Bool {
        var backlog = traceBacklogs.removeValue(forKey: trace) ?? TraceBacklog(shared.tracer.drain(trace))
        guard backlog.hasWork else { return false }
        let viewer = viewer(of: session)
        let end = backlog.next + Swift.min(budget, backlog.records.count - backlog.next)
        var buffer = session.context.channel.allocator.buffer(capacity: 128 * Swift.min(end - backlog.next, Self.recordsPerNotification) + 64)
        repeat {
            let stop = Swift.min(end, backlog.next + Self.recordsPerNotification)
            var records = Array(backlog.records[backlog.next..<stop])
            if viewer.scope != .everyone { records = records.map { viewer.shown($0) } }
            let batch = TraceRecordsNotification(trace: trace, records: records, lost: backlog.lost)
            JSONRPCOutboundMessage.notification(method: V1Method.traceRecords.rawValue, params: batch.jsonValue).writeLine(into: &buffer)
            backlog.lost = 0
            backlog.next = stop
        } while backlog.next < end
        session.write(buffer)
        guard backlog.next < backlog.records.count else { return false }
        traceBacklogs[trace] = backlog
        return true
    }

    /// Records made by the control loop (a Present read, links added and removed, the
    /// decision after a change), when a trace runs; `body` runs only then.
    func trace(_ body: () -> [TraceRecord]) {
        guard shared.tracer.isActive else { return }
        shared.tracer.record(body())
    }

    /// The decision of each of `displays` now, as trace records.
    func decisionRecords(_ displays: [DisplayID], at: MonotonicClock.Instant) -> [TraceRecord] {
        shared.read { state in
            displays.compactMap { display in
                guard let decision = try? state.compositor.decision(of: display) else { return nil }
                return .decision(
                    display: display, at: at.seconds, rate: decision.rate, rule: decision.rule.rawValue, reason: decision.reason,
                    reasonWithoutLabels: decision.reason(showingLabelOf: { _ in false })
                )
            }
        }
    }
}

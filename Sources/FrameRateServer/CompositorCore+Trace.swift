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
        flushTraces()
        endTrace(trace)
        return .object([:])
    }

    /// Ends every trace of a closing connection.
    func endTraces(of owner: OwnerID) {
        for (trace, holder) in traces where holder == owner { endTrace(trace) }
    }

    private func endTrace(_ trace: UInt64) {
        traces[trace] = nil
        shared.tracer.stop(trace)
        if traces.isEmpty {
            traceFlush?.cancel()
            traceFlush = nil
        }
    }

    /// Sends each running trace its records so far, to connections that keep up.
    func flushTraces() {
        for (trace, owner) in traces {
            guard let session = sessions[owner], session.isWritable else { continue }
            var (records, lost) = shared.tracer.drain(trace)
            guard !records.isEmpty || lost > 0 else { continue }
            // Records are made once for every trace; each trace sees them as its viewer may.
            let viewer = viewer(of: session)
            if viewer.scope != .everyone { records = records.map { viewer.shown($0) } }
            var buffer = session.context.channel.allocator.buffer(capacity: 128 * min(records.count, Self.recordsPerNotification) + 64)
            var start = 0
            repeat {
                let end = min(records.count, start + Self.recordsPerNotification)
                let batch = TraceRecordsNotification(trace: trace, records: Array(records[start..<end]), lost: start == 0 ? lost : 0)
                JSONRPCOutboundMessage.notification(method: V1Method.traceRecords.rawValue, params: batch.jsonValue).writeLine(into: &buffer)
                start = end
            } while start < records.count
            session.write(buffer)
        }
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

import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl trace --duration S -o FILE`: records what the daemon does and writes a
/// Perfetto trace.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Record what the daemon does for a while and write a Perfetto trace.",
        discussion: """
            Subscribes to the daemon's trace (framerate.v1.Compositor/Trace) for --duration \
            seconds and writes Perfetto's native protobuf format to -o FILE: per display, a \
            counter track of the refresh rate (Hz), vsync instants and decision instants (rule \
            and reason as debug annotations); per link, a track named after its pid, command \
            and label with one slice per tick interval, Present and Presented instants joined \
            by flows, and its hitches marked on a child track. Timestamps are CLOCK_MONOTONIC \
            nanoseconds, so the trace lines up with a system trace of the same machine. Open \
            the file at ui.perfetto.dev or with trace_processor. Ctrl-C abandons the recording.

            Examples:
              framectl trace --duration 5 -o framerated.pftrace
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(help: "Seconds to record (0.1 to 600).")
    var duration: Double = 5

    @Option(name: .shortAndLong, help: "The trace file to write.")
    var output: String

    func validate() throws {
        guard duration.isFinite, duration >= 0.1, duration <= 600 else {
            throw ValidationError("--duration must be 0.1 to 600 seconds, got \(duration)")
        }
    }

    func run() throws {
        let session = try LineSession.connectTrusted(socketPath: global.socket)
        defer { session.socket.close() }
        var builder: PerfettoTrace?
        var pending: [TraceRecordsNotification] = []
        var lost: UInt64 = 0
        var failure: RPCError?
        let collect: (UnsafeRawBufferPointer) -> Void = { line in
            guard let notification = Self.records(in: line) else { return }
            pending.append(notification)
        }
        let started = MonotonicClock.now
        let reply = try Self.call(session, .trace, params: JSONValue.object([:]), collect: collect)
        guard let trace = reply["trace"]?.int64Value, trace > 0, let stateJSON = reply["state"] else {
            throw CommandFailure("the daemon's Trace reply has no trace id or state")
        }
        do {
            builder = PerfettoTrace(state: try CompositorState(json: stateJSON), at: started.seconds)
        } catch {
            failure = error
        }
        if let failure { throw CommandFailure("an unreadable Trace state: \(failure.message)") }
        let end = started.nanoseconds + Int64(duration * 1e9)
        while true {
            let line: String?
            do {
                line = try session.readLine(deadline: end)
            } catch .timedOut {
                break
            } catch {
                throw CommandFailure("the connection to the daemon failed while tracing: \(error)")
            }
            guard let line else { throw CommandFailure("the daemon closed the connection while tracing") }
            var bytes = Array(line.utf8)
            bytes.withUnsafeBytes { collect($0) }
            bytes.removeAll()
        }
        _ = try Self.call(session, .stopTrace, params: ["trace": JSONValue(UInt64(trace))], collect: collect)
        for notification in pending where notification.trace == UInt64(trace) {
            lost += notification.lost
            for record in notification.records { builder?.add(record) }
        }
        guard var builder else { return }
        let bytes = builder.encoded()
        try FileOutput.write(bytes, to: output)
        let counts = builder.counts
        Console.error(
            "wrote \(output) (\(bytes.count) bytes): \(counts.ticks) ticks, \(counts.vsyncs) vsyncs, \(counts.rateChanges) rate changes, "
                + "\(counts.decisions) decisions, \(counts.presents) presents, \(counts.presented) presented "
                + "(\(counts.hitches) hitches, \(counts.dropped) dropped)"
        )
        if lost > 0 {
            Console.error("framectl: warning: the daemon dropped \(lost) records this client did not read in time; the trace has gaps")
        }
    }

    /// Parses a `TraceRecords` line; `nil` for any other notification (ticks of other links).
    static func records(in line: UnsafeRawBufferPointer) -> TraceRecordsNotification? {
        guard let message = try? JSONRPCClientInbound.parse(line: line),
            case .single(.notification(let method, let params)) = message, method == V1Method.traceRecords.rawValue
        else { return nil }
        return try? TraceRecordsNotification(json: params)
    }

    /// Calls `method`, handing notifications read meanwhile to `collect`; an error reply
    /// becomes the command's failure.
    static func call(
        _ session: LineSession, _ method: V1Method, params: JSONValue, collect: (UnsafeRawBufferPointer) -> Void
    ) throws -> JSONValue {
        let deadline = MonotonicClock.nowNanoseconds + 10_000_000_000
        let reply: RPCReply
        do {
            reply = try session.call(method, params: params, deadline: deadline, onNotification: collect)
        } catch {
            throw CommandFailure("\(method.method) failed: \(error)")
        }
        switch reply.result {
        case .success(let value): return value
        case .failure(let error): throw CommandFailure("\(method.method) refused: \(error.message)")
        }
    }
}

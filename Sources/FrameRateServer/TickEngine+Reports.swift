import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore

/// What the tick plane reports besides ticks: `framerate.v1.DisplayLink/Presented` for the
/// frames a vsync showed, sent at that vsync after its ticks, by the fan-out thread that
/// sends the connection's ticks (see docs/architecture.md,
/// "Presented"), and the records of running traces.
///
/// Kept apart from the tick path: only links that present cost anything here, and each
/// notification is encoded with the one JSON-RPC codec, outside the model lock.
extension TickEngine {
    /// A shown frame with the writer of its connection.
    struct Presented {
        let presentation: Presentation<MonotonicClock.Instant>
        let writer: SocketWriter
    }

    /// Pairs each frame `report` shows with its connection's writer (under the model lock:
    /// a table lookup per frame, nothing more).
    static func collectPresented(
        _ report: VsyncReport<MonotonicClock.Instant>, writers: OwnerTable<SocketWriter>, into presented: inout [Presented]
    ) {
        for presentation in report.presentations {
            guard let writer = writers[presentation.owner] else { continue }
            presented.append(Presented(presentation: presentation, writer: writer))
        }
    }

    /// Records what the vsyncs of `wake` did for the running traces (after the sends).
    static func trace(_ wake: FanOutDriver<MonotonicClock>.Wake, into tracer: TraceRecorder) {
        var records: [TraceRecord] = []
        for index in wake.reports.indices { records += TraceRecorder.records(of: wake.reports[index]) }
        tracer.record(records)
    }

    /// Encodes and writes each `Presented` notification to its connection (after the lock,
    /// after the connection's ticks of the same vsync, on the thread that sent them). As a
    /// tick, it waits behind a reply in progress (``SocketWriter/writeTicks(_:)``): a reply
    /// being written holds the vsync's ticks, and `Presented` must not overtake them.
    static func sendPresented(_ presented: [Presented]) {
        guard !presented.isEmpty else { return }
        let allocator = ByteBufferAllocator()
        for entry in presented {
            var buffer = allocator.buffer(capacity: 192)
            JSONRPCOutboundMessage.notification(
                method: V1Method.presented.rawValue, params: PresentedNotification(entry.presentation).jsonValue
            ).writeLine(into: &buffer)
            entry.writer.writeTicks(buffer)
        }
    }
}

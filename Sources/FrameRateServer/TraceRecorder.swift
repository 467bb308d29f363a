import FrameRateModel
import FrameRateProtocol
import Synchronization

/// The records of every running trace, each in a bounded buffer, shared by the tick plane
/// (vsyncs, ticks, rate changes, shown frames) and the control loop (decisions, Present,
/// links added and removed), which drains them every 100 ms to the tracing connections.
///
/// Its own lock, never held with the model lock taken inside it: recording happens after
/// the model work. When no trace runs, recording costs one atomic load.
package final class TraceRecorder: Sendable {
    /// Records kept per trace between two drains; past it records are counted as lost.
    static let capacity = 1 << 16

    private struct Buffer {
        var records: [TraceRecord] = []
        var lost: UInt64 = 0
    }

    private let buffers = Mutex<[UInt64: Buffer]>([:])
    private let active = Atomic<Bool>(false)

    /// Whether any trace runs (a cheap check before building records).
    var isActive: Bool { active.load(ordering: .relaxed) }

    /// Starts buffering for `trace`.
    func start(_ trace: UInt64) {
        buffers.withLock { $0[trace] = Buffer() }
        active.store(true, ordering: .relaxed)
    }

    /// Stops buffering for `trace` and forgets what it had.
    func stop(_ trace: UInt64) {
        buffers.withLock { buffers in
            buffers[trace] = nil
            active.store(!buffers.isEmpty, ordering: .relaxed)
        }
    }

    /// Appends `records` to every running trace; what a full buffer cannot take is counted
    /// as lost without touching its records.
    func record(_ records: [TraceRecord]) {
        guard !records.isEmpty else { return }
        buffers.withLock { buffers in
            // The keys are copied out first: iterating `buffers.keys` holds the dictionary's
            // storage, so each change below copied the whole dictionary and then, its
            // record arrays no longer unique, every record of the trace. With a trace of
            // 1,000 ticking links left unread (its buffer full at 65,536 records), that
            // copy ran every vsync on the fan-out thread and another user's 120 Hz link
            // kept 54 % of its ticks (Tests/Realtime, trace-of-1000-ticking-links-unread).
            for trace in Array(buffers.keys) {
                let room = Swift.max(0, Self.capacity - buffers[trace]!.records.count)
                if room > 0 { buffers[trace]!.records += records.prefix(room) }
                if room < records.count { buffers[trace]!.lost += UInt64(records.count - room) }
            }
        }
    }

    /// Where `trace`'s records are stored now, and how many fit there: for tests, which
    /// check that recording appends in place (``record(_:)``).
    func storage(of trace: UInt64) -> (address: UnsafeRawPointer?, capacity: Int)? {
        buffers.withLock { buffers in
            buffers[trace].map { buffer in (buffer.records.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }, buffer.records.capacity) }
        }
    }

    /// Takes `trace`'s records and lost count so far.
    func drain(_ trace: UInt64) -> (records: [TraceRecord], lost: UInt64) {
        buffers.withLock { buffers in
            guard let buffer = buffers[trace] else { return ([], 0) }
            buffers[trace] = Buffer()
            return (buffer.records, buffer.lost)
        }
    }

    /// Counts `count` records of `trace` as lost (its connection could not take them).
    func lose(_ count: Int, of trace: UInt64) {
        buffers.withLock { $0[trace]?.lost += UInt64(count) }
    }

    /// What one vsync's report adds to a trace: the vsync, a rate change and the decision
    /// that took effect, every tick and every shown frame.
    static func records(of report: VsyncReport<MonotonicClock.Instant>) -> [TraceRecord] {
        let display = report.display
        let at = report.vsync.seconds
        var records: [TraceRecord] = [.vsync(display: display, at: at)]
        // A change applied at an earlier vsync that a late wake-up passed over is stamped
        // with its own vsync, and goes before this one's.
        var earlierCount = 0
        for (change, vsync) in report.rateChanges {
            let changeAt = vsync.seconds
            let changeRecords: [TraceRecord] = [
                .rateChange(display: display, at: changeAt, from: change.from, to: change.to),
                .decision(
                    display: display, at: changeAt, rate: change.decision.rate, rule: change.decision.rule.rawValue, reason: change.reason,
                    reasonWithoutLabels: change.decision.reason(showingLabelOf: { _ in false })
                ),
            ]
            if changeAt < at {
                records.insert(contentsOf: changeRecords, at: earlierCount)
                earlierCount += changeRecords.count
            } else {
                records.append(contentsOf: changeRecords)
            }
        }
        for tick in report.ticks {
            records.append(
                .tick(
                    display: display, link: tick.link, sequence: tick.sequence, timestamp: tick.timestamp.seconds,
                    targetTimestamp: tick.targetTimestamp.seconds, skipped: tick.skipped, refreshRate: tick.refreshRate
                )
            )
        }
        for presentation in report.presentations {
            records.append(.presented(display: display, PresentedNotification(presentation)))
        }
        return records
    }
}

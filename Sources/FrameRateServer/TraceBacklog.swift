import FrameRateProtocol

/// A trace's records taken from the ``TraceRecorder`` and not all written yet
/// (``CompositorCore/flushTraces()`` writes a bounded number a loop turn).
struct TraceBacklog {
    /// The records taken, oldest first.
    let records: [TraceRecord]
    /// The first record not written yet.
    var next = 0
    /// Records the recorder could not keep before these, to report with the next ones.
    var lost: UInt64

    init(_ drained: (records: [TraceRecord], lost: UInt64)) {
        self.records = drained.records
        self.lost = drained.lost
    }

    /// Whether anything is left to report: records, or a lost count.
    var hasWork: Bool { next < records.count || lost > 0 }
}

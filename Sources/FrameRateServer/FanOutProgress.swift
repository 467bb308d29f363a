import Synchronization

/// How far the fan-out threads have sent the tick batches built so far: what decides when a
/// closed connection's writer, which a batch may name unretained, can be let go
/// (``RetiredWriters``).
///
/// Batches are numbered from 1 as the leader builds them (``DaemonState/beginBatch()``),
/// under the model lock. The leader then hands each helper its shard (``Helper/submitted``),
/// sends its own, and records the batch in ``leaderSent``; each helper records every batch
/// it has sent (``Helper/sent``), in order. Read from any thread, by the leader before it
/// builds the next batch, or by the control loop under the model lock when a connection
/// closes (so a closed writer is let go at once whenever no batch is in flight, idle
/// daemon included, instead of waiting for a vsync that may never come).
package final class FanOutProgress: Sendable {
    /// One helper thread's progress.
    final class Helper: Sendable {
        /// The latest batch handed to the helper (written by the leader only).
        let submitted = Atomic<UInt64>(0)
        /// The latest batch the helper has sent (its sends returned).
        let sent = Atomic<UInt64>(0)
    }

    /// The latest batch whose leader shard was sent and whose other shards were handed over.
    let leaderSent = Atomic<UInt64>(0)
    /// One per helper thread the tick plane may start (unused ones stay at 0, idle).
    let helpers: [Helper]

    /// - Parameter helpers: the most helper threads (fan-out threads but the leader).
    package init(helpers: Int) {
        self.helpers = (0..<max(0, helpers)).map { _ in Helper() }
    }

    /// Whether every thread has sent every batch the leader has handed over.
    package var allSent: Bool { sentThrough == leaderSent.load(ordering: .acquiring) }

    /// Every batch numbered up to the result has been sent by every thread.
    var sentThrough: UInt64 {
        // Acquiring: every hand-over to a helper of a batch up to it is visible below.
        var through = leaderSent.load(ordering: .acquiring)
        for helper in helpers {
            let sent = helper.sent.load(ordering: .acquiring)
            // A helper that has sent all it was given holds nothing back.
            if sent != helper.submitted.load(ordering: .acquiring) { through = min(through, sent) }
        }
        return through
    }
}

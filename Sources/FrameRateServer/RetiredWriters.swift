import FrameRatePosix

/// Writers of closed connections that a tick batch built before the close may still name.
///
/// The tick plane pairs each tick with its connection's writer without retaining it: a
/// retain per connection and vsync was the first touch of a cold object, 3–4 % of the
/// fan-out thread at 1,000 links, taken under the model lock. What keeps a writer alive
/// instead is ``DaemonState/writers`` while the connection is open, and this list after:
/// a writer taken out of the table waits here, with the number of the last batch built
/// before it left, until every batch up to that one has been sent.
///
/// The numbers are ``DaemonState/batchesBuilt``: batches are numbered from 1 in the order
/// the leader builds them, and each fan-out thread sends its batches in that order.
struct RetiredWriters {
    private var entries: [(writer: SocketWriter, lastBatch: UInt64)] = []

    /// Writers waiting.
    var count: Int { entries.count }

    /// Keeps `writer` until batch `lastBatch` (the last built while the writer was in the
    /// table; 0: none) has been sent.
    mutating func retire(_ writer: SocketWriter, lastBatch: UInt64) {
        entries.append((writer, lastBatch))
    }

    /// Takes out the writers that no unsent batch can name, for the caller to drop (outside
    /// the model lock).
    /// - Parameter sentThrough: every batch numbered up to this one has been sent.
    mutating func release(sentThrough: UInt64) -> [SocketWriter] {
        guard !entries.isEmpty else { return [] }
        var released: [SocketWriter] = []
        entries.removeAll { entry in
            guard entry.lastBatch <= sentThrough else { return false }
            released.append(entry.writer)
            return true
        }
        return released
    }
}

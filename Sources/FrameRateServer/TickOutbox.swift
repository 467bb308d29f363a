import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore

/// One fan-out thread's send side: it encodes a vsync's tick lines for its shard into one
/// buffer, each connection's lines contiguous (several links on one connection go out in
/// one send), and hands the buffer to a ``BatchSender``: one io_uring submission for the
/// whole shard where the kernel allows it.
///
/// Owned by one fan-out thread (its ``TickEngine`` or ``FanOutHelper`` keeps it in a
/// `Mutex` that only that thread takes).
struct TickOutbox: ~Copyable {
    var sender: BatchSender
    /// The vsync's encoded lines (reused: cleared, not freed, between vsyncs).
    private var lines = ByteBufferAllocator().buffer(capacity: 64 * 1024)
    private var segments: [BatchSender.Segment] = []
    /// Per connection: its first and last delivery; `next` links a connection's deliveries.
    private var chains: [(first: Int, last: Int)] = []
    private var next: [Int] = []

    init(path: BatchSender.Path) {
        sender = BatchSender(preferred: path)
    }

    /// Encodes `batch` and sends each connection's lines. `epoch` tells this vsync's
    /// deliveries apart from earlier ones on each writer (``SocketWriter/fanOutEpoch``).
    mutating func send(_ batch: TickEngine.Batch, epoch: UInt64) {
        guard !batch.deliveries.isEmpty else { return }
        // The deliveries' writers are unretained: `owners` keeps them alive, until the sends return.
        withExtendedLifetime(batch.owners) { sendLines(of: batch, epoch: epoch) }
    }

    private mutating func sendLines(of batch: TickEngine.Batch, epoch: UInt64) {
        chains.removeAll(keepingCapacity: true)
        next.removeAll(keepingCapacity: true)
        next.append(contentsOf: repeatElement(-1, count: batch.deliveries.count))
        for index in batch.deliveries.indices {
            batch.deliveries[index].writer._withUnsafeGuaranteedRef { writer in
                if writer.fanOutEpoch != epoch {
                    writer.fanOutEpoch = epoch
                    writer.fanOutSegment = chains.count
                    chains.append((index, index))
                } else {
                    let chain = writer.fanOutSegment
                    next[chains[chain].last] = index
                    chains[chain].last = index
                }
            }
        }
        lines.clear()
        segments.removeAll(keepingCapacity: true)
        batch.fields.withUnsafeBufferPointer { fields in
            for chain in chains {
                let start = lines.readableBytes
                var index = chain.first
                while index >= 0 {
                    let (link, sequence, skipped, shared) = (
                        batch.deliveries[index].link, batch.deliveries[index].sequence, batch.deliveries[index].skipped,
                        batch.deliveries[index].fields
                    )
                    TickLineEncoder.write(link: link, sequence: sequence, skipped: skipped, shared: fields[shared], into: &lines)
                    index = next[index]
                }
                segments.append(
                    BatchSender.Segment(
                        writer: batch.deliveries[chain.first].writer.takeUnretainedValue(), offset: start,
                        length: lines.readableBytes - start
                    )
                )
            }
        }
        sender.send(lines, segments: segments)
    }
}

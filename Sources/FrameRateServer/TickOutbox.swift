import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore

/// One fan-out thread's send side: it encodes a vsync's tick lines for its shard into a
/// buffer, each connection's lines contiguous (several links on one connection go out in
/// one send), and hands the buffer to a ``BatchSender``: one io_uring submission per
/// ``chunkBytes`` of lines where the kernel allows it.
///
/// Owned by one fan-out thread (its ``TickEngine`` or ``FanOutHelper`` keeps it in a
/// `Mutex` that only that thread takes).
struct TickOutbox: ~Copyable {
    var sender: BatchSender
    /// The vsync's encoded lines (reused: cleared, not freed, between vsyncs).
    private var lines = ByteBufferAllocator().buffer(capacity: 64 * 1024)
    private var segments: [BatchSender.Segment] = []
    /// Per connection: its first and last delivery; `next` links a connection's deliveries
    /// (-1 ends a chain). Only grown: the batch's chains are the first `chainCount`, and
    /// `next` is written for each of the batch's deliveries before it is read.
    private var chains: [(first: Int, last: Int, count: Int)] = []
    private var chainCount = 0
    private var next: [Int] = []
    /// By connection slot (``TickEngine/Delivery/connection``): the batch whose lines are
    /// being gathered for it, and its chain in that batch. Kept here, side by side, rather
    /// than in each connection's writer, so gathering a vsync's lines touches no writer.
    private var gatheredIn: [UInt64] = []
    private var chainOf: [Int] = []
    /// The batch's shared field segments, back to back, and where each lies.
    private var shared = ByteBufferAllocator().buffer(capacity: 4096)
    private var sharedRanges: [Range<Int>] = []

    /// Lines encoded before they are sent and the buffer is reused: small enough that the
    /// kernel copies them out of the cache they were just written to. One buffer for a
    /// whole vsync (about 280 bytes a connection, over half a megabyte at 2,000) was
    /// written, evicted and read back from memory, and evicted the writers on its way.
    static let chunkBytes = 16 * 1024

    /// The connections' words for unlocked claims (``TickGates``), indexed by slot.
    private let gates: TickGates?

    init(path: BatchSender.Path, gates: TickGates?) {
        sender = BatchSender(preferred: path)
        self.gates = gates
    }

    /// Encodes `batch` and sends each connection's lines. The deliveries' writers must be
    /// alive until this returns (``DaemonState/removeWriter(of:)`` sees to it).
    /// - Parameter number: the batch's number, above every earlier one's sent here.
    mutating func send(_ batch: TickEngine.Batch, number: UInt64) {
        guard !batch.deliveries.isEmpty else { return }
        gather(batch.deliveries, number: number)
        shared.clear()
        sharedRanges.removeAll(keepingCapacity: true)
        for var fields in batch.fields {
            let start = shared.readableBytes
            shared.writeBuffer(&fields)
            sharedRanges.append(start..<shared.readableBytes)
        }
        // Local copies (one retain each per batch), read while `self.lines` is written.
        let sharedBytes = shared
        let (chains, chainCount, next, ranges) = (self.chains, self.chainCount, self.next, sharedRanges)
        let lineBound = TickLineEncoder.lineBound(sharedCount: ranges.lazy.map(\.count).max() ?? 0)
        // Moved out, so that appending does not copy it, and back after.
        var segments: [BatchSender.Segment] = []
        swap(&segments, &self.segments)
        defer { swap(&segments, &self.segments) }
        sharedBytes.withUnsafeReadableBytes { fields in
            var first = 0
            while first < chainCount {
                // One chunk: whole chains until their lines could reach chunkBytes, written
                // through one pointer with room reserved once (a `ByteBuffer` write per line
                // cost a uniqueness, capacity and exclusivity check each).
                var end = first
                var room = 0
                while end < chainCount && (end == first || room < Self.chunkBytes) {
                    room += chains[end].count * lineBound
                    end += 1
                }
                lines.clear()
                segments.removeAll(keepingCapacity: true)
                lines.writeWithUnsafeMutableBytes(minimumWritableBytes: room) { out in
                    var at = 0
                    for chain in chains[first..<end] {
                        let start = at
                        var index = chain.first
                        while index >= 0 {
                            let delivery = batch.deliveries[index]
                            at = TickLineEncoder.write(
                                link: delivery.link, sequence: delivery.sequence, skipped: delivery.skipped,
                                shared: UnsafeRawBufferPointer(rebasing: fields[ranges[Int(delivery.fields)]]), to: out, at: at
                            )
                            index = next[index]
                        }
                        let gate = batch.deliveries[chain.first].owner.tickGate
                        segments.append(
                            BatchSender.Segment(
                                writer: batch.deliveries[chain.first].writer, offset: start, length: at - start, slot: gate.slot, tag: gate.tag
                            )
                        )
                    }
                    return at
                }
                sender.send(lines, segments: segments, gates: gates)
                first = end
            }
        }
    }

    /// Chains each connection's deliveries in `deliveries` (`chains`, `next`), in order,
    /// so that its lines are encoded side by side.
    ///
    /// Every array is sized first and then written through its buffer: written in place,
    /// each store took a uniqueness check (four a delivery, 2 % of a tick's instructions).
    private mutating func gather(_ deliveries: [TickEngine.Delivery], number: UInt64) {
        let count = deliveries.count
        // A slot of ``DaemonState/writers`` that held the writer: bounded by the table.
        let slots = deliveries.reduce(0) { Swift.max($0, $1.connection) } + 1
        if slots > gatheredIn.count {
            gatheredIn.append(contentsOf: repeatElement(0, count: slots - gatheredIn.count))
            chainOf.append(contentsOf: repeatElement(0, count: slots - chainOf.count))
        }
        if count > next.count {
            next.append(contentsOf: repeatElement(-1, count: count - next.count))
            chains.append(contentsOf: repeatElement((first: -1, last: -1, count: 0), count: count - chains.count))
        }
        var chainCount = 0
        deliveries.withUnsafeBufferPointer { deliveries in
            gatheredIn.withUnsafeMutableBufferPointer { gatheredIn in
                chainOf.withUnsafeMutableBufferPointer { chainOf in
                    chains.withUnsafeMutableBufferPointer { chains in
                        next.withUnsafeMutableBufferPointer { next in
                            for index in 0..<count {
                                let connection = deliveries[index].connection
                                next[index] = -1
                                if gatheredIn[connection] != number {
                                    gatheredIn[connection] = number
                                    chainOf[connection] = chainCount
                                    chains[chainCount] = (index, index, 1)
                                    chainCount += 1
                                } else {
                                    let chain = chainOf[connection]
                                    next[chains[chain].last] = index
                                    chains[chain].last = index
                                    chains[chain].count += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        self.chainCount = chainCount
    }
}

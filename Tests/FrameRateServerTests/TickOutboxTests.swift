import FrameRateModel
import FrameRatePosix
@testable import FrameRateServer
import FrameRateProtocol
import NIOCore
import Testing

/// `TickOutbox` over real socket pairs: a batch larger than one chunk of lines still gives
/// every connection its own lines, whole, in order, each connection's in one piece, on
/// both send paths, with the connections' words in ``TickGates`` or without.
@Suite struct TickOutboxTests {
    struct Connections {
        let sockets: [(Int32, Int32)]
        let writers: [SocketWriter]
        let gates: TickGates?

        init(count: Int, gated: Bool) throws {
            sockets = try (0..<count).map { _ in try SystemCall.socketPair() }
            let gates = gated ? TickGates(capacity: count) : nil
            writers = sockets.enumerated().map { slot, socket in
                SocketWriter(
                    destination: .socket(socket.0), highWater: 1 << 20,
                    gate: gates?.gate(slot: slot, tag: TickGates.tag(of: Self.generation))
                )
            }
            self.gates = gates
        }

        static let generation: UInt64 = 5

        /// `rounds` links on each connection of `slots` (every connection when `nil`), link
        /// `slot * rounds + round + 1`, interleaved as a display's report lists them.
        func batch(slots: [Int]? = nil, rounds: Int = 2) -> TickEngine.Batch {
            let fields = TickLineEncoder.sharedFields(
                timestamp: 2_000_000_000, targetTimestamp: 2_008_333_333, duration: 8_333_333, refreshRate: 120,
                callbackRate: 120, allocator: ByteBufferAllocator()
            )
            var deliveries: [TickEngine.Delivery] = []
            for round in 0..<rounds {
                for slot in slots ?? Array(writers.indices) {
                    deliveries.append(
                        TickEngine.Delivery(
                            link: UInt64(slot * rounds + round + 1), sequence: 9, skipped: 0, writer: .passUnretained(writers[slot]),
                            owner: OwnerID(rawValue: Self.generation << 32 | UInt64(slot + 1)), fields: 0
                        ))
                }
            }
            return TickEngine.Batch(deliveries: deliveries, fields: [fields])
        }

        /// The links of the lines waiting on connection `slot`'s socket (each line whole).
        func receivedLinks(_ slot: Int) -> [UInt64] {
            var chunk = [UInt8](repeating: 0, count: 8192)
            let count = chunk.withUnsafeMutableBytes { SystemCall.read(sockets[slot].1, into: $0) } ?? 0
            guard count > 0, chunk[count - 1] == UInt8(ascii: "\n") else { return [] }
            return chunk[..<count].split(separator: UInt8(ascii: "\n")).compactMap { line in
                Array(line).withUnsafeBytes { TickLineScanner.scan($0)?.link }
            }
        }

        func close() {
            for writer in writers { writer.close() }
            for socket in sockets { SystemCall.close(socket.1) }
        }
    }

    static let cases: [(BatchSender.Path, Bool)] = BatchSender.Path.allCases.flatMap { [($0, false), ($0, true)] }

    @Test(arguments: cases)
    func aBatchOfSeveralChunksReachesEveryConnectionWithItsOwnLines(path: BatchSender.Path, gated: Bool) throws {
        let connections = try Connections(count: 120, gated: gated)
        defer { connections.close() }
        var outbox = TickOutbox(path: path, gates: connections.gates)
        let batch = connections.batch()
        #expect(connections.writers.count * 2 * 200 > TickOutbox.chunkBytes)  // more than one chunk
        // Three vsyncs: the first registers each descriptor (through its writer), the later
        // ones go through the gates where there are some.
        for number in 1...3 {
            outbox.send(batch, number: UInt64(number))
            for slot in connections.writers.indices {
                #expect(connections.receivedLinks(slot) == [UInt64(slot * 2 + 1), UInt64(slot * 2 + 2)])
            }
        }
        for writer in connections.writers { #expect(writer.queuedBytes == 0) }
    }

    /// The outbox keeps its chains between batches and only grows them: a batch with fewer
    /// deliveries and other connections after a larger one, and a larger one again, send
    /// each connection exactly its own lines of that batch.
    @Test(arguments: BatchSender.Path.allCases)
    func batchesOfDifferentSizesAndConnectionsEachSendOnlyTheirOwnLines(path: BatchSender.Path) throws {
        let connections = try Connections(count: 60, gated: false)
        defer { connections.close() }
        var outbox = TickOutbox(path: path, gates: nil)
        let everyThird = Array(stride(from: 2, to: 60, by: 3))
        let sequence: [(slots: [Int]?, rounds: Int)] = [(nil, 2), (everyThird, 3), ([59], 1), (nil, 4), (everyThird, 1)]
        for (number, step) in sequence.enumerated() {
            outbox.send(connections.batch(slots: step.slots, rounds: step.rounds), number: UInt64(number + 1))
            for slot in connections.writers.indices {
                let sent = step.slots.map { $0.contains(slot) } ?? true
                let expected = sent ? (0..<step.rounds).map { UInt64(slot * step.rounds + $0 + 1) } : []
                #expect(connections.receivedLinks(slot) == expected, "batch \(number + 1), connection \(slot)")
            }
        }
    }

    @Test(arguments: BatchSender.Path.allCases)
    func aReplyInProgressHoldsTheTicksEvenWhenTheGateWasOpen(path: BatchSender.Path) throws {
        let connections = try Connections(count: 2, gated: true)
        defer { connections.close() }
        var outbox = TickOutbox(path: path, gates: connections.gates)
        let batch = connections.batch()
        outbox.send(batch, number: 1)
        _ = (connections.receivedLinks(0), connections.receivedLinks(1))
        connections.writers[0].beginReply()
        outbox.send(batch, number: 2)
        #expect(connections.receivedLinks(0).isEmpty)  // held for the reply
        #expect(connections.receivedLinks(1) == [3, 4])
        connections.writers[0].endReply(nil)
        #expect(connections.receivedLinks(0) == [1, 2])
        // And the gate opens again: the next vsync goes straight out.
        outbox.send(batch, number: 3)
        #expect(connections.receivedLinks(0) == [1, 2])
    }

    @Test func aClosedConnectionsNewerNeighbourInTheSameSlotGetsNoneOfItsTicks() throws {
        let gates = TickGates(capacity: 1)
        let (oldWriting, oldReading) = try SystemCall.socketPair()
        let (newWriting, newReading) = try SystemCall.socketPair()
        defer {
            SystemCall.close(oldReading)
            SystemCall.close(newReading)
        }
        let old = SocketWriter(destination: .socket(oldWriting), highWater: 1 << 20, gate: gates.gate(slot: 0, tag: TickGates.tag(of: 1)))
        old.close()
        let new = SocketWriter(destination: .socket(newWriting), highWater: 1 << 20, gate: gates.gate(slot: 0, tag: TickGates.tag(of: 2)))
        defer { new.close() }
        // A batch built before the close still names the old connection, in the same slot.
        var sender = BatchSender(preferred: .sendCalls)
        let line = "old\n"
        withExtendedLifetime(old) {
            sender.send(
                ByteBuffer(string: line),
                segments: [BatchSender.Segment(writer: .passUnretained(old), offset: 0, length: 4, slot: 0, tag: TickGates.tag(of: 1))],
                gates: gates
            )
        }
        var chunk = [UInt8](repeating: 0, count: 64)
        let count = chunk.withUnsafeMutableBytes { SystemCall.read(newReading, into: $0) } ?? 0
        #expect(count <= 0)  // nothing for the new connection
        #expect(new.write(ByteBuffer(string: "new\n")) == .sent)
    }
}

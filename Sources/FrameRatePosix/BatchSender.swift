#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix
public import NIOCore

/// Sends one vsync's lines to many connections with as few system calls as the kernel
/// allows: every connection's bytes are one segment of a single buffer, and the sends go
/// to the kernel in one io_uring submission (one `io_uring_enter` per ``ringEntries``
/// sends), or, where io_uring is unavailable, as one `send` per connection.
///
/// Each connection is claimed before the sends and landed after them, through its word in
/// ``TickGates`` where it has one and its writer allows it, else through its writer's lock
/// (``SocketWriter/claimForTicks()``), so a batch keeps the writer's order, whole-line and
/// no-write-after-close guarantees although it sends outside the writers' locks.
///
/// One per fan-out thread, used by that thread only (its owner keeps it in a `Mutex`). A
/// struct, so that its scratch arrays are not class properties with run-time exclusivity
/// checks on every append.
public struct BatchSender: ~Copyable {
    /// How the sends reach the kernel.
    public enum Path: String, Sendable, CaseIterable {
        /// One io_uring submission for a batch.
        case ioUring = "io_uring"
        /// One `send(2)` per connection.
        case sendCalls = "send"
    }

    /// One connection's bytes in a batch: `length` bytes at `offset` from the buffer's reader index.
    public struct Segment {
        /// Not retained: the caller of ``BatchSender/send(_:segments:)`` keeps every
        /// segment's writer alive until the call returns (a retain and release per
        /// connection and vsync would each reach a cold object).
        public var writer: Unmanaged<SocketWriter>
        public var offset: Int
        public var length: Int
        /// The connection's slot in the ``TickGates`` passed to ``BatchSender/send(_:segments:gates:)``
        /// (−1: none), and its tag there (``TickGates/tag(of:)``).
        public var slot: Int
        public var tag: UInt64

        public init(writer: Unmanaged<SocketWriter>, offset: Int, length: Int, slot: Int = -1, tag: UInt64 = 0) {
            self.writer = writer
            self.offset = offset
            self.length = length
            self.slot = slot
            self.tag = tag
        }
    }

    /// The path in use.
    public private(set) var path: Path
    /// Why io_uring is not in use when it was asked for (`nil` otherwise).
    public private(set) var fallbackReason: String?
    /// The io_uring failure that moved a running sender to `send` calls, until
    /// ``takeRingFailure()`` reports it.
    private var unreportedRingFailure: PosixError?
    /// Sends per `io_uring_enter`.
    public let ringEntries: UInt32

    private var ring: SendRing?
    /// The batch's claimed sends, one record each (reused from batch to batch; the owner
    /// thread only): descriptor, registered or not, bytes, the segment's index and the gate
    /// word as claimed without the writer (0: claimed through the writer). One record, not
    /// six parallel arrays: queueing a send was six appends, each with its own uniqueness
    /// and capacity checks (`framebench tick-cost` under callgrind).
    private var queued: [cframerated_send] = []

    /// - Parameters:
    ///   - preferred: the path to use if the kernel allows it (`.sendCalls` never fails).
    ///   - ringEntries: io_uring submission slots (sends per `io_uring_enter`).
    ///   - registeredFiles: io_uring registered-file slots (connections whose descriptor
    ///     number is below it are sent to without a per-send file lookup). Default: one per
    ///     descriptor the process may open, at most 65,536.
    public init(preferred: Path, ringEntries: UInt32 = 1024, registeredFiles: UInt32? = nil) {
        self.ringEntries = ringEntries
        guard preferred == .ioUring else {
            (ring, path, fallbackReason) = (nil, .sendCalls, nil)
            return
        }
        do throws(PosixError) {
            let ring = try SendRing(entries: ringEntries, files: registeredFiles ?? SendRing.defaultFiles)
            (self.ring, path, fallbackReason) = (ring, .ioUring, nil)
        } catch {
            (ring, path, fallbackReason) = (nil, .sendCalls, "\(error)")
        }
    }

    /// Sends each segment of `bytes` to its writer's connection. A writer that cannot take
    /// its lines at once (bytes queued, a reply in progress, not a socket) gets them through
    /// ``SocketWriter/writeTicks(_:)``; a closed one drops them. Every segment's writer
    /// must stay alive until this returns.
    /// - Parameter gates: the table the segments' `slot`s index; a connection whose word
    ///   allows it is claimed and landed there, without its writer being touched.
    public mutating func send(_ bytes: ByteBuffer, segments: [Segment], gates: TickGates? = nil) {
        precondition(UInt32(exactly: bytes.readableBytes) != nil, "a batch above 4 GiB")
        precondition(UInt32(exactly: segments.count) != nil, "a batch of more than 2^32 sends")
        queued.removeAll(keepingCapacity: true)
        queued.reserveCapacity(segments.count)
        // Bound once: an `if let` per segment would retain and release the table each time.
        let gateTable = gates
        for index in segments.indices {
            if let (descriptor, word) = gateTable?.claim(
                slot: segments[index].slot, tag: segments[index].tag, needsRegistration: ring != nil
            ) {
                queue(segments[index], index: index, descriptor: descriptor, isFixed: ring != nil, gateWord: word)
                continue
            }
            let writer = segments[index].writer
            switch writer._withUnsafeGuaranteedRef({ $0.claimForTicks() }) {
            case .socket(let descriptor, let registered):
                var isFixed = registered
                if !registered, let ring, ring.register(descriptor) {
                    writer._withUnsafeGuaranteedRef { $0.noteRegistered(in: ring) }
                    isFixed = true
                }
                queue(segments[index], index: index, descriptor: descriptor, isFixed: isFixed, gateWord: 0)
            case .indirect:
                if let lines = bytes.getSlice(at: bytes.readerIndex + segments[index].offset, length: segments[index].length) {
                    _ = writer._withUnsafeGuaranteedRef { $0.writeTicks(lines) }
                }
            case .closed:
                break
            }
        }
        guard !queued.isEmpty else { return }
        bytes.withUnsafeReadableBytes { base in
            if let ring {
                let status = queued.withUnsafeMutableBufferPointer { sends in
                    cframerated_send_ring_send_all(
                        ring.pointer, sends.baseAddress, base.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        UInt32(truncatingIfNeeded: sends.count)
                    )
                }
                if status < 0 { abandonRing(after: PosixError(errno: -status, call: "io_uring_enter")) }
                for send in queued {
                    let segment = segments[Int(send.segment)]
                    let outcome: SystemCall.SendOutcome
                    if send.result == CFRAMERATED_SEND_NOT_SUBMITTED {
                        // Its chunk never reached the failed ring: sent now, as on the send path.
                        let lines = UnsafeRawBufferPointer(rebasing: base[segment.offset..<(segment.offset + segment.length)])
                        outcome = SystemCall.send(send.fd, lines)
                    } else {
                        outcome = SystemCall.SendOutcome(result: Int(send.result), requested: segment.length)
                    }
                    land(outcome, segment: segment, gateWord: send.gate_word, gates: gates, base: base)
                }
            } else {
                for send in queued {
                    let segment = segments[Int(send.segment)]
                    let lines = UnsafeRawBufferPointer(rebasing: base[segment.offset..<(segment.offset + segment.length)])
                    land(SystemCall.send(send.fd, lines), segment: segment, gateWord: send.gate_word, gates: gates, base: base)
                }
            }
        }
    }
}

extension BatchSender {
    /// The ring failed mid-batch: it is never submitted to again (requests it did not take
    /// would go out with the next submission, pointing at this batch's freed buffer and
    /// possibly reused descriptors), and every later batch goes out as `send` calls. The
    /// failed batch's sends whose outcome is unknown (those of the chunk being submitted)
    /// count as failed: their connections close, and the clients reconnect; those of later
    /// chunks never reached the ring and go out as `send` calls. Registered descriptors
    /// stay registered until their writers close them (``SendRing/unregister(_:)`` needs
    /// no submission).
    mutating func abandonRing(after error: PosixError) {
        guard ring != nil else { return }
        ring = nil
        path = .sendCalls
        fallbackReason = "io_uring failed while sending (\(error)); this fan-out thread sends with send(2) from now on"
        unreportedRingFailure = error
    }

    /// The ring's descriptor while it is in use (tests replace it to make submissions fail).
    var ringDescriptor: Int32? { ring.map { cframerated_send_ring_fd($0.pointer) } }

    /// The io_uring failure that moved this sender to `send` calls, once (`nil` after, or if none).
    public mutating func takeRingFailure() -> PosixError? {
        defer { unreportedRingFailure = nil }
        return unreportedRingFailure
    }

    /// Adds a claimed segment to the batch's sends.
    /// - Parameter gateWord: the gate word as claimed (0: claimed through the writer).
    @inline(__always)
    private mutating func queue(_ segment: Segment, index: Int, descriptor: Int32, isFixed: Bool, gateWord: UInt64) {
        queued.append(
            cframerated_send(
                fd: descriptor, fixed: isFixed ? 1 : 0,
                offset: UInt32(truncatingIfNeeded: segment.offset),  // < readableBytes ≤ UInt32.max
                length: UInt32(truncatingIfNeeded: segment.length), result: 0,
                segment: UInt32(truncatingIfNeeded: index),  // < segments.count ≤ UInt32.max (checked in send)
                gate_word: gateWord
            )
        )
    }

    /// Ends one segment's claim: a whole send claimed through the gate ends there, unless
    /// the writer changed the word meanwhile; anything else lands through the writer.
    @inline(__always)
    private func land(
        _ outcome: SystemCall.SendOutcome, segment: Segment, gateWord: UInt64, gates: TickGates?, base: UnsafeRawBufferPointer
    ) {
        if gateWord != 0, case .complete = outcome, let gates, gates.landIfUnchanged(slot: segment.slot, claimed: gateWord) {
            return
        }
        let lines = UnsafeRawBufferPointer(rebasing: base[segment.offset..<(segment.offset + segment.length)])
        segment.writer._withUnsafeGuaranteedRef { $0.landTicks(outcome, of: lines) }
    }
}

/// An io_uring for ``BatchSender`` (liburing's ring behind the C shim) with a table of
/// registered files: a connection's descriptor number is its slot, so a send names the
/// socket without the kernel looking it up (and reference-counting it) each time.
///
/// `@unchecked Sendable`: submissions (``BatchSender/send(_:segments:)``) happen only on
/// the thread that owns the ``BatchSender`` holding this ring (it is `~Copyable` and kept in
/// that thread's `Mutex`). Other threads only call ``unregister(_:)`` (from
/// ``SocketWriter/close()``): one `io_uring_register` system call, which the kernel
/// serializes with submissions and which touches no user-space ring state.
final class SendRing: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Registered-file slots: descriptors below this number can be registered.
    let files: Int32

    /// - Parameters:
    ///   - entries: submission slots (sends per `io_uring_enter`).
    ///   - files: registered-file slots wanted (0: none; the kernel may refuse the table).
    init(entries: UInt32, files: UInt32) throws(PosixError) {
        guard let pointer = cframerated_send_ring_create(entries, files) else {
            throw PosixError(errno: errno, call: "io_uring_setup")
        }
        self.pointer = pointer
        self.files = Int32(clamping: cframerated_send_ring_files(pointer))
    }

    deinit {
        cframerated_send_ring_destroy(pointer)
    }

    /// Registers `descriptor` in its slot; `false` if it is beyond the table or the kernel refused.
    func register(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0, descriptor < files else { return false }
        return cframerated_send_ring_set_file(pointer, UInt32(descriptor), descriptor) == 0
    }

    /// Empties `descriptor`'s slot (before the descriptor is closed: the table holds its own
    /// reference to the socket, which would keep the connection open).
    func unregister(_ descriptor: Int32) {
        guard descriptor >= 0, descriptor < files else { return }
        _ = cframerated_send_ring_set_file(pointer, UInt32(descriptor), -1)
    }

    /// The registered-file slots to ask for: one per descriptor the process may open
    /// (`RLIMIT_NOFILE`), at most 65,536.
    static var defaultFiles: UInt32 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return UInt32(min(limit.rlim_cur, 65_536))
    }
}

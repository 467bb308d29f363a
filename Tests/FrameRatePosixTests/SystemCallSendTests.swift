#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import FrameRatePosix
import Testing

/// `SystemCall.send` over real socket pairs: the bare `sendto` system call
/// (`cframerated_send_nonblocking`) must never block, never raise `SIGPIPE`, and turn every
/// result into the ``SystemCall/SendOutcome`` the tick plane acts on.
@Suite struct SystemCallSendTests {
    typealias Pair = SocketWriterTests.Pair

    /// Bytes `0, 1, 2, …` (mod 251, so a lost or repeated chunk shows), `count` of them.
    static func pattern(_ count: Int, from start: Int = 0) -> [UInt8] {
        (start..<start + count).map { UInt8($0 % 251) }
    }

    @Test func aSendThatFitsIsCompleteAndArrivesIntact() throws {
        let pair = try Pair()
        defer { pair.close() }
        let bytes = Self.pattern(1000)
        #expect(bytes.withUnsafeBytes { SystemCall.send(pair.writing, $0) } == .complete)
        #expect(pair.drain() == bytes)
    }

    @Test func anEmptySendIsCompleteAndWritesNothing() throws {
        let pair = try Pair()
        defer { pair.close() }
        #expect([UInt8]().withUnsafeBytes { SystemCall.send(pair.writing, $0) } == .complete)
        #expect(pair.drain().isEmpty)
    }

    /// Filling a blocking socket's buffer: the send that no longer fits is partial (the
    /// kernel's count, or 0 when nothing fits) and returns at once; the bytes it reports
    /// are exactly the bytes the reader gets, in order.
    @Test func aFullBufferGivesPartialSendsThatNeverBlockAndLoseNothing() throws {
        let pair = try Pair(writingEndBlocks: true)
        defer { pair.close() }
        // Were MSG_DONTWAIT lost, a blocking send would wait out this timeout and then
        // report EAGAIN (a partial 0) anyway: the elapsed time tells the two apart.
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        try #require(setsockopt(pair.writing, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0)
        let chunk = 1000
        var offered = 0
        var accepted = 0
        var outcomes: [SystemCall.SendOutcome] = []
        let start = ContinuousClock.now
        while outcomes.last != .partial(0) {
            try #require(outcomes.count < 10_000, "the buffer never filled")
            let bytes = Self.pattern(chunk, from: accepted)
            let outcome = bytes.withUnsafeBytes { SystemCall.send(pair.writing, $0) }
            outcomes.append(outcome)
            offered += chunk
            switch outcome {
            case .complete: accepted += chunk
            case .partial(let count): accepted += count
            case .failed(let errno): Issue.record("send failed with errno \(errno)"); return
            }
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(1), "a send on a full blocking socket waited \(elapsed): MSG_DONTWAIT is not in effect")
        #expect(outcomes.first == .complete)
        #expect(accepted > 0 && accepted < offered)
        // Every outcome before the last is complete or a partial count below the offer.
        #expect(outcomes.dropLast().allSatisfy { $0 == .complete || { if case .partial(let n) = $0 { n > 0 && n < chunk } else { false } }($0) })
        #expect(pair.drain() == Self.pattern(accepted))
        // Room again: the next send is taken whole.
        #expect(Self.pattern(10).withUnsafeBytes { SystemCall.send(pair.writing, $0) } == .complete)
    }

    /// A peer that closed: `EPIPE`, reported as a failure, with no `SIGPIPE` for the process.
    /// `SIGPIPE` from a send goes to the sending thread: blocked here, it would stay pending.
    @Test func aClosedPeerFailsWithEPIPEAndRaisesNoSIGPIPE() throws {
        let pair = try Pair()
        SystemCall.close(pair.reading)
        defer { SystemCall.close(pair.writing) }
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        var previous = sigset_t()
        try #require(pthread_sigmask(SIG_BLOCK, &pipe, &previous) == 0)
        defer { _ = pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var pendingBefore = sigset_t()
        sigpending(&pendingBefore)
        try #require(sigismember(&pendingBefore, SIGPIPE) == 0)

        let outcome = Self.pattern(100).withUnsafeBytes { SystemCall.send(pair.writing, $0) }

        var pending = sigset_t()
        sigpending(&pending)
        let raised = sigismember(&pending, SIGPIPE) == 1
        if raised {
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipe, nil, &zero)  // consume it before the mask is restored
        }
        #expect(outcome == .failed(errno: EPIPE))
        #expect(!raised, "the send raised SIGPIPE: MSG_NOSIGNAL is not in effect")
    }

    @Test func aDescriptorThatIsNotOpenFailsWithEBADF() {
        #expect(Self.pattern(10).withUnsafeBytes { SystemCall.send(-1, $0) } == .failed(errno: EBADF))
    }

    @Test func aDescriptorThatIsNotASocketFailsWithENOTSOCK() throws {
        var fds: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&fds) == 0)
        defer { fds.forEach(SystemCall.close) }
        #expect(Self.pattern(10).withUnsafeBytes { SystemCall.send(fds[1], $0) } == .failed(errno: ENOTSOCK))
    }

    /// The mapping io_uring's completions share with the bare system call.
    @Test func resultsMapToOutcomes() {
        #expect(SystemCall.SendOutcome(result: 10, requested: 10) == .complete)
        #expect(SystemCall.SendOutcome(result: 4, requested: 10) == .partial(4))
        #expect(SystemCall.SendOutcome(result: 0, requested: 10) == .partial(0))
        #expect(SystemCall.SendOutcome(result: -Int(EAGAIN), requested: 10) == .partial(0))
        #expect(SystemCall.SendOutcome(result: -Int(EPIPE), requested: 10) == .failed(errno: EPIPE))
        #expect(SystemCall.SendOutcome(result: -Int(ECONNRESET), requested: 10) == .failed(errno: ECONNRESET))
        // A result no errno can be is clamped, not trapped on.
        #expect(SystemCall.SendOutcome(result: Int.min, requested: 10) == .failed(errno: Int32.max))
    }
}

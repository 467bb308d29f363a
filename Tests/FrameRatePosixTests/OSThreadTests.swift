#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import Testing

@testable import FrameRatePosix

/// `OSThread.join()` from async code (the server's shutdown): it suspends instead of
/// blocking a thread of the concurrency pool, and still returns only after the body.
@Suite struct OSThreadTests {
    /// What a thread's body and the test share.
    private final class Shared: Sendable {
        let release = Mutex(false)
        let finished = Atomic<Bool>(false)
        let joining = Atomic<Bool>(false)
        let joined = Atomic<Bool>(false)
    }

    @Test("join() from async code returns only after the body returned")
    func asyncJoinWaitsForTheBody() async throws {
        let shared = Shared()
        let thread = try OSThread.spawn(name: "join-test") {
            // Spins until the test lets it go: no clock involved.
            while !shared.release.withLock({ $0 }) { sched_yield() }
            shared.finished.store(true, ordering: .releasing)
        }
        let joiner = Task {
            shared.joining.store(true, ordering: .releasing)
            await thread.join()
            shared.joined.store(true, ordering: .releasing)
        }
        while !shared.joining.load(ordering: .acquiring) { await Task.yield() }
        // A join that did not wait would be done well within these turns.
        for _ in 0..<200 { await Task.yield() }
        let joinedEarly = shared.joined.load(ordering: .acquiring)
        #expect(!joinedEarly, "join() returned while the body was still running")
        shared.release.withLock { $0 = true }
        await joiner.value
        let (finished, joined) = (shared.finished.load(ordering: .acquiring), shared.joined.load(ordering: .acquiring))
        #expect(finished && joined)
    }

    @Test("join() from async code of a thread whose body already returned returns at once")
    func asyncJoinAfterTheBody() async throws {
        let shared = Shared()
        let thread = try OSThread.spawn(name: "joined-late") { shared.finished.store(true, ordering: .releasing) }
        while !shared.finished.load(ordering: .acquiring) { await Task.yield() }
        await thread.join()
        let finished = shared.finished.load(ordering: .acquiring)
        #expect(finished)
    }
}

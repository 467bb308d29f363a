import FrameRateModel
import FrameRatePosix
import Synchronization

/// On a virtual-clock daemon, the thread that stands in for the tick plane's leader in
/// one duty: flushing connections whose socket buffers filled up, when epoll reports them
/// writable. (The steps themselves run on the control loop: ``VirtualTimeKeeper``.)
/// Flushing sends queued bytes in their order, so it changes no connection's byte stream.
final class WritabilityFlusher: Sendable {
    private let shared: SharedModel
    private let stopping = Atomic<Bool>(false)

    init(shared: SharedModel) {
        self.shared = shared
    }

    /// Waits for writable sockets and flushes them until ``stop()``.
    func run() {
        while !stopping.load(ordering: .acquiring) {
            shared.flushWritable(shared.waiter.wait(until: nil))
        }
    }

    /// Ends ``run()`` (from any thread).
    func stop() {
        stopping.store(true, ordering: .releasing)
        shared.waiter.wake()
    }
}

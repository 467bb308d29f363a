package import FrameRateProtocol
import Synchronization

/// `CLOCK_MONOTONIC` as a test sets it: the daemon's clock in ``ServerHarness``, which
/// moves only when told to.
package final class SteppedMonotonicClock: Sendable {
    private let instant: Mutex<MonotonicClock.Instant>
    package init(_ start: MonotonicClock.Instant) { instant = Mutex(start) }
    package var now: MonotonicClock.Instant { instant.withLock { $0 } }
    package func set(_ now: MonotonicClock.Instant) { instant.withLock { $0 = now } }
    package func advance(by duration: Duration) { instant.withLock { $0 = $0.advanced(by: duration) } }
}

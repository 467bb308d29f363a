package import FrameRateProtocol
import Synchronization

/// The virtual now of a `--clock virtual` daemon, readable from any thread: the
/// control loop moves it (``VirtualTimeKeeper``), everything that asks the daemon's
/// `now` reads it. Instants are ``MonotonicClock/Instant`` values (nanoseconds) starting
/// at `--virtual-epoch`, so the model and the wire use them unchanged.
package final class VirtualClock: Sendable {
    private let nanoseconds: Atomic<Int64>

    /// The latest instant `Compositor/Advance` may move to: 4·10⁹ s, half of what 64-bit
    /// nanoseconds hold, so no instant arithmetic near it can overflow.
    package static let latest = MonotonicClock.Instant(nanoseconds: 4_000_000_000_000_000_000)

    /// A clock standing at `epoch`.
    package init(epoch: MonotonicClock.Instant) {
        nanoseconds = Atomic(epoch.nanoseconds)
    }

    /// The virtual now.
    package var now: MonotonicClock.Instant {
        MonotonicClock.Instant(nanoseconds: nanoseconds.load(ordering: .acquiring))
    }

    /// Moves the clock (only the control loop does, and never backwards).
    func set(_ instant: MonotonicClock.Instant) {
        nanoseconds.store(instant.nanoseconds, ordering: .releasing)
    }
}

package import FrameRateProtocol
import Synchronization

/// The virtual now of a `--clock virtual` daemon, readable from any thread: the
/// control loop moves it (``VirtualTimeKeeper``), everything that asks the daemon's
/// `now` reads it. Instants are ``MonotonicClock/Instant`` values (nanoseconds) starting
/// at `--virtual-epoch`, so the model and the wire use them unchanged.
package final class VirtualClock: Sendable {
    private let nanoseconds: Atomic<Int64>

    /// The latest instant `Compositor/Advance` may move to: 2·10⁹ s. The pacers hold a
    /// display's times since its origin (the epoch, 0 to 10⁹ s) in nanoseconds within
    /// ±`Int64.max / 4`, about 2.3·10⁹ s (``LinkPacer``), so time since any epoch stays
    /// inside; until 2026-11-30 it was 4·10⁹ s, and past 2.3·10⁹ s since the epoch the
    /// pacers saturated and `skipped` counts went wrong.
    package static let latest = MonotonicClock.Instant(nanoseconds: 2_000_000_000_000_000_000)

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

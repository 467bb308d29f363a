package import FrameRateProtocol
import Synchronization

/// `CLOCK_MONOTONIC` as a test sets it: the daemon's clock in ``ServerHarness``, which
/// moves only when told to.
package final class SteppedMonotonicClock: Sendable {
    private struct State {
        var instant: MonotonicClock.Instant
        /// How far each read moves the clock on, after it answers.
        var stepPerRead: Duration = .zero
    }

    private let state: Mutex<State>
    package init(_ start: MonotonicClock.Instant) { state = Mutex(State(instant: start)) }
    /// The instant now; with ``advanceOnEveryRead(by:)`` set, the clock moves on after answering.
    package var now: MonotonicClock.Instant {
        state.withLock { state in
            defer { state.instant = state.instant.advanced(by: state.stepPerRead) }
            return state.instant
        }
    }
    package func set(_ now: MonotonicClock.Instant) { state.withLock { $0.instant = now } }
    package func advance(by duration: Duration) { state.withLock { $0.instant = $0.instant.advanced(by: duration) } }
    /// Makes every later read of ``now`` move the clock on by `step` (`.zero`: never again),
    /// as if whatever work reads it took that long: how a test makes the control plane's
    /// turn budget run out in the middle of a batch.
    package func advanceOnEveryRead(by step: Duration) { state.withLock { $0.stepPerRead = step } }
}

import Synchronization

/// A clock that only moves when told to: the stepped clock for tests of
/// time-dependent logic. `sleep(until:)` suspends until ``advance(by:)`` or
/// ``advance(to:)`` moves the clock past the deadline.
public final class ManualClock: Clock, Sendable {
    /// An instant on a ``ManualClock``: a duration since the clock's origin.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// Time since the clock's origin.
        public var offset: Duration
        /// An instant `offset` after the origin.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now: Instant
        var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    /// A clock reading `now` (default: the origin).
    public init(now: Instant = Instant(offset: .zero)) {
        self.state = Mutex(State(now: now))
    }

    /// The current reading.
    public var now: Instant { state.withLock { $0.now } }
    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until the clock has been advanced to `deadline` or past it.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if deadline <= state.now { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
        try Task.checkCancellation()
    }

    /// Moves the clock forward by `duration` and wakes every sleeper now due.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never backwards) and wakes every sleeper now due.
    public func advance(to instant: Instant) {
        let due = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.now = max(state.now, instant)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.map(\.continuation)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for continuation in due { continuation.resume() }
    }
}

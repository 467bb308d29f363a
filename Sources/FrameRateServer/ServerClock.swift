public import FrameRateProtocol

/// Which clock the daemon's compositor runs on (`framerated --clock`).
public enum ServerClock: Sendable, Hashable {
    /// Real time: `CLOCK_MONOTONIC`, vsyncs paced by the tick plane's threads.
    case monotonic
    /// Virtual time for testing frame-pacing code (issue 14 §3): it starts at `epoch` and
    /// jumps from one due instant to the next as soon as every delivered tick is answered
    /// (``VirtualClockDriver``); a tick left unanswered is waited for at most
    /// `answerTimeout` of wall time.
    case virtual(epoch: MonotonicClock.Instant, answerTimeout: Duration)

    /// The name `Compositor/GetState` reports: `monotonic` or `virtual`.
    public var name: String {
        switch self {
        case .monotonic: "monotonic"
        case .virtual: "virtual"
        }
    }
}

import ArgumentParser

/// `--clock monotonic|virtual`.
enum ClockArgument: String, ExpressibleByArgument, CaseIterable {
    /// Real time (CLOCK_MONOTONIC).
    case monotonic
    /// Virtual time for testing frame-pacing code.
    case virtual
}

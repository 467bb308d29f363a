import Histogram

/// Everything one worker process measures. The worker is one thread: no locks, and the
/// counters touched per tick skip Swift's run-time exclusivity checks (a measurable share
/// of the receive path): one thread, one access at a time.
final class WorkerState {
    /// Ticks whose `timestamp` lies in `[windowStart, windowEnd)` (nanoseconds on
    /// `CLOCK_MONOTONIC`) are counted; the window is empty until the parent says go.
    @exclusivity(unchecked) var windowStart: Int64 = .max
    @exclusivity(unchecked) var windowEnd: Int64 = .min
    /// Receipt time minus `timestamp` of every counted tick, nanoseconds.
    @exclusivity(unchecked) var latency = nanosecondHistogram()
    /// Counted ticks.
    @exclusivity(unchecked) var received: UInt64 = 0
    /// Sum of `skipped` over counted ticks.
    @exclusivity(unchecked) var skipped: UInt64 = 0
    /// Ticks whose sequence broke `sequence == previous + skipped + 1`.
    @exclusivity(unchecked) var sequenceErrors: UInt64 = 0
    /// Lines that were neither a Tick of one of our links nor a Register response.
    @exclusivity(unchecked) var unexpectedLines: UInt64 = 0
    /// Waits in the window that returned at least one ready socket.
    @exclusivity(unchecked) var wakeups: UInt64 = 0
    /// Connections that closed before the end.
    var disconnects = 0
    /// Register calls answered with a link.
    var registeredLinks = 0
    /// Sum of the registered links' callback rates, Hz.
    var callbackRateSum = 0.0
    /// Failures for people (register errors, connection errors), first few only.
    var errors: [String] = []

    func note(_ error: String) {
        if errors.count < 5 { errors.append(error) }
    }

    /// The worker's figures at the end of the run.
    /// - Parameter perLinkReceived: how many ticks each registered link received in the window.
    func summary(perLinkReceived: some Sequence<UInt64>) -> WorkerSummary {
        var perLinkMinimum = UInt64.max
        var perLinkMaximum: UInt64 = 0
        for received in perLinkReceived {
            perLinkMinimum = min(perLinkMinimum, received)
            perLinkMaximum = max(perLinkMaximum, received)
        }
        var buckets: [(UInt64, UInt64)] = []
        for bucket in latency.recordedValues() { buckets.append((bucket.value, UInt64(bucket.count))) }
        return WorkerSummary(
            links: registeredLinks, callbackRateSum: callbackRateSum, received: received, skipped: skipped,
            sequenceErrors: sequenceErrors, unexpectedLines: unexpectedLines, wakeups: wakeups, disconnects: disconnects,
            perLinkMinimum: registeredLinks == 0 ? 0 : perLinkMinimum, perLinkMaximum: perLinkMaximum,
            latencyBuckets: buckets, errors: errors
        )
    }
}

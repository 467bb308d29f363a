package import FrameRateModel

/// The tick plane's decisions, as a pure state machine over clock `C`: given `now`, which
/// vsyncs to process, whom to disconnect, when to ping the watchdog, and when to wake next.
///
/// It never reads a clock and performs no I/O; ``TickEngine`` performs its ``Action``s
/// and sleeps until ``Wake/sleepUntil``. Tests drive it with a stepped clock and check
/// exact instants.
///
/// What it owns:
/// - **The wake-up schedule.** It wakes only at vsyncs where something happens (a link's
///   interval starts, or a rate change takes effect: ``Compositor/nextEventfulVsync(of:)``),
///   at an unwritable connection's deadline, and at the watchdog's next ping. With no
///   unpaused link it does not wake for the display at all; the vsync grid stays exact
///   because it is computed, not counted.
/// - **The unwritable set.** A connection whose outbound queue passed its high-water mark
///   gets no ticks (each missed interval is counted in its next tick's `skipped`); one
///   that stays so for ``Settings/unwritableTimeout`` is disconnected.
/// - **Lifecycle.** After ``stop()`` it does nothing and never wakes.
package struct FanOutDriver<C: Clock>: Sendable where C.Duration == Duration {
    /// Timing settings, in clock durations.
    struct Settings: Sendable {
        /// How long a connection may stay unwritable before it is disconnected.
        var unwritableTimeout: Duration = .seconds(5)
        /// How often to ping the service manager's watchdog; `nil`: no watchdog.
        var watchdogInterval: Duration? = nil
    }

    /// One thing to do now besides the vsyncs' ticks (``Wake/reports``).
    enum Action: Sendable, Equatable {
        /// The connection has not read for ``Settings/unwritableTimeout``: close it.
        case disconnect(OwnerID)
        /// Tell the service manager the tick plane is alive.
        case pingWatchdog
    }

    /// What one wake-up decided.
    struct Wake: Sendable {
        /// Each display's vsync processed at this wake-up, in display order: the ticks to
        /// write and the rate change to report, if any. The deadline-bound work, done before
        /// ``actions``. Kept apart from them so that the tick plane reads each report in
        /// place: matching `Action.deliver(let report)` out of one list copied every report
        /// twice a vsync (about 1,000 instructions of a 10-link vsync's 29,700).
        var reports: [VsyncReport<C.Instant>] = []
        /// Everything else, in order.
        var actions: [Action] = []
        /// When to wake next; `nil`: only when something changes.
        var sleepUntil: C.Instant?
    }

    private let settings: Settings
    /// Connections above their high-water mark, with when they became so.
    private var unwritableSince: [OwnerID: C.Instant] = [:]
    /// How many of each unwritable connection's writers are above their mark (1 or 2).
    private var unwritableWriters: [OwnerID: Int] = [:]
    /// When the watchdog is next due.
    private var nextWatchdogPing: C.Instant?
    private var stopped = false

    /// A driver starting at `start` (the first watchdog ping is due one interval later).
    init(settings: Settings, start: C.Instant) {
        self.settings = settings
        self.nextWatchdogPing = settings.watchdogInterval.map { start.advanced(by: $0) }
    }

    /// Whether `owner` can take a tick now (not in the unwritable set).
    func canDeliver(to owner: OwnerID) -> Bool {
        unwritableSince.isEmpty || unwritableSince[owner] == nil
    }

    /// The number of connections currently not taking ticks.
    var unwritableCount: Int { unwritableSince.count }

    /// Processes everything due at `now`: each display's eventful vsync (if due), overdue
    /// unwritable connections, the watchdog.
    mutating func wake(at now: C.Instant, compositor: inout Compositor<C>) -> Wake {
        guard !stopped else { return Wake() }
        var wake = Wake()
        for display in compositor.displayIDs {
            guard let due = try? compositor.nextEventfulVsync(of: display), due <= now else { continue }
            let unwritable = unwritableSince
            if let report = try? compositor.vsync(of: display, at: now, canDeliver: { unwritable.isEmpty || unwritable[$0] == nil }) {
                wake.reports.append(consume report)
            }
        }
        // Found first, removed after: removing while iterating copied the dictionary.
        let timedOut = unwritableSince.isEmpty ? [] : unwritableSince.compactMap { owner, since in
            since.advanced(by: settings.unwritableTimeout) <= now ? owner : nil
        }
        for owner in timedOut {
            wake.actions.append(.disconnect(owner))
            unwritableSince[owner] = nil
            unwritableWriters[owner] = nil
        }
        if let ping = nextWatchdogPing, ping <= now, let interval = settings.watchdogInterval {
            wake.actions.append(.pingWatchdog)
            nextWatchdogPing = now.advanced(by: interval)
        }
        wake.sleepUntil = nextDeadline(compositor: compositor)
        return wake
    }

    /// The earliest instant anything is due, or `nil`.
    package func nextDeadline(compositor: Compositor<C>) -> C.Instant? {
        guard !stopped else { return nil }
        var earliest = nextWatchdogPing
        func consider(_ instant: C.Instant?) {
            guard let instant else { return }
            if earliest == nil || instant < earliest! { earliest = instant }
        }
        consider(compositor.earliestEventfulVsync)
        for since in unwritableSince.values { consider(since.advanced(by: settings.unwritableTimeout)) }
        return earliest
    }

    /// One of a connection's writers crossed its high-water mark (`writable == false`) or
    /// drained. A connection with a tick socket has two writers, each reporting its own
    /// crossings in turn: it is unwritable while either is, since the first crossed.
    mutating func writabilityChanged(of owner: OwnerID, writable: Bool, at now: C.Instant) {
        let unwritable = (unwritableWriters[owner] ?? 0) + (writable ? -1 : 1)
        if unwritable <= 0 {
            unwritableWriters[owner] = nil
            unwritableSince[owner] = nil
        } else {
            unwritableWriters[owner] = unwritable
            if unwritableSince[owner] == nil { unwritableSince[owner] = now }
        }
    }

    /// The connection closed: forget it.
    mutating func closed(_ owner: OwnerID) {
        unwritableSince[owner] = nil
        unwritableWriters[owner] = nil
    }

    /// Shutdown: from now on nothing is delivered and nothing wakes.
    mutating func stop() {
        stopped = true
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { stopped }
}

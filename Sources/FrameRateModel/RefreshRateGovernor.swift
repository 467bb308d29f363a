/// Timing rules between arbitration and the panel: when an arbitrated rate
/// actually takes effect.
///
/// - An increase takes effect at the next vsync.
/// - A decrease takes effect at the first vsync after the display has wanted a
///   lower rate continuously for ``Settings/decreaseDwell``, so it does not flap.
/// - With no voting link, the display holds its rate for ``Settings/idleTimeout``,
///   then decreases to the lowest rate under the same dwell.
///
/// A pure state machine over the instants of clock `C`: callers feed it
/// decisions (``observe(_:at:)``) and vsyncs (``vsync(at:)``) and apply the
/// ``RefreshRateChange`` it returns.
public struct RefreshRateGovernor<C: Clock>: Sendable where C.Duration == Duration {
    /// Timing settings, in clock durations.
    public struct Settings: Hashable, Sendable {
        /// How long a display with no voting link holds its rate before idling down. Default 1 s.
        public var idleTimeout: Duration
        /// How long a lower rate must be wanted before it is applied. Default 250 ms.
        public var decreaseDwell: Duration

        /// Builds settings; the defaults are 1 s idle timeout and 250 ms decrease dwell.
        public init(idleTimeout: Duration = .seconds(1), decreaseDwell: Duration = .milliseconds(250)) {
            self.idleTimeout = idleTimeout
            self.decreaseDwell = decreaseDwell
        }
    }

    /// The timing settings.
    public let settings: Settings
    /// The rate in force, in Hz.
    public private(set) var currentRate: Double
    /// Why the rate in force was chosen.
    public private(set) var currentReason: String
    /// The latest arbitration, which the governor moves towards.
    public private(set) var target: Decision?
    /// Since when the display has had no voting link, if it has none.
    private var idleSince: C.Instant?
    /// Since when the display has wanted a rate below the current one.
    private var decreaseWantedSince: C.Instant?

    /// A governor starting at `initialRate` Hz.
    public init(initialRate: Double, settings: Settings = Settings()) {
        self.settings = settings
        self.currentRate = initialRate
        self.currentReason = "initial rate \(FrameRateMath.format(initialRate)) Hz; no link has voted yet"
    }

    /// A governor restored at a handover: `rate` in force for `reason`, moving towards
    /// `target`, with the idle and decrease timers it had.
    init(
        restoringRate rate: Double, reason: String, target: Decision, idleSince: C.Instant?, decreaseWantedSince: C.Instant?,
        settings: Settings
    ) {
        self.settings = settings
        self.currentRate = rate
        self.currentReason = reason
        self.target = target
        self.idleSince = idleSince
        self.decreaseWantedSince = decreaseWantedSince
    }

    /// The idle and decrease timers, for a handover.
    var timers: (idleSince: C.Instant?, decreaseWantedSince: C.Instant?) { (idleSince, decreaseWantedSince) }

    /// Records a new arbitration decision made at `now`.
    public mutating func observe(_ decision: Decision, at now: C.Instant) {
        target = decision
        if decision.rule == .idle {
            let since = idleSince ?? now
            idleSince = since
            decreaseWantedSince = since.advanced(by: settings.idleTimeout)
        } else {
            idleSince = nil
            if decision.refreshRate < currentRate && !FrameRateMath.equal(decision.refreshRate, currentRate) {
                // Wanted since an earlier wish still running, or from now. An idle deadline still
                // ahead (the display was holding its rate through the idle timeout) is not a wish
                // for a lower rate yet, so it must not delay this decrease.
                decreaseWantedSince = decreaseWantedSince.map { Swift.min($0, now) } ?? now
            } else {
                decreaseWantedSince = nil
            }
        }
        if FrameRateMath.equal(decision.refreshRate, currentRate) { currentReason = decision.reason }
    }

    /// When a pending decrease (or idle drop) becomes due, if one is pending.
    public var pendingDecreaseDeadline: C.Instant? {
        decreaseWantedSince.map { $0.advanced(by: settings.decreaseDwell) }
    }

    /// Called at each vsync instant `now`: returns the change to apply from this vsync on, if any.
    public mutating func vsync(at now: C.Instant) -> RefreshRateChange? {
        guard let target, !FrameRateMath.equal(target.refreshRate, currentRate) else { return nil }
        if target.refreshRate < currentRate {
            guard let deadline = pendingDecreaseDeadline, now >= deadline else { return nil }
        }
        let change = RefreshRateChange(from: currentRate, to: target.refreshRate, reason: target.reason, decision: target)
        currentRate = target.refreshRate
        currentReason = target.reason
        decreaseWantedSince = nil
        return change
    }
}

/// A refresh-rate change to apply from the current vsync on.
public struct RefreshRateChange: Hashable, Sendable {
    /// The rate before, in Hz.
    public let from: Double
    /// The rate from this vsync on, in Hz.
    public let to: Double
    /// Why, for people: the deciding arbitration's reason (``decision``'s).
    public let reason: String
    /// The arbitration that took effect; its ``Decision/pending`` is `nil`.
    public let decision: Decision
}

package import FrameRateModel

/// When a virtual-clock daemon (`framerated --clock virtual`) moves its time, as a pure
/// state machine: it reads no clock and performs nothing; the caller
/// (``VirtualTimeKeeper``) passes what it needs and performs the ``Action``.
///
/// Two clocks, both `C`: **virtual** instants (the compositor's time, starting at
/// `--virtual-epoch`) and **wall** instants (`CLOCK_MONOTONIC`), used only for the
/// answer timeout.
///
/// The rule, one of the two issue 14 §3 leaves open:
/// - While any unpaused link exists, time jumps to the next instant the tick plane has
///   something to do (``FanOutDriver/nextDeadline(compositor:)``) as soon as every
///   delivered tick of an unpaused link has been answered (`FrameDone` or `Present`).
/// - A tick left unanswered is waited for at most ``Settings/answerTimeout`` of wall
///   time; then the driver gives up on that interval (the model counts the link's next
///   intervals as skipped while it stays busy, as in real time) and moves on. Each new
///   interval of a silent link is waited for again, so time never races ahead of it.
/// - With no unpaused link, time moves only on `Compositor/Advance`: to each due
///   instant up to the advance's end, then to the end itself.
package struct VirtualClockDriver<C: Clock>: Sendable where C.Duration == Duration {
    /// Timing settings.
    package struct Settings: Sendable {
        /// How long (wall time) to wait for an unanswered tick before moving on (`--virtual-timeout`).
        package var answerTimeout: Duration

        package init(answerTimeout: Duration) {
            self.answerTimeout = answerTimeout
        }
    }

    /// What to do now.
    package enum Action: Hashable, Sendable {
        /// Set the virtual clock to this instant and run the tick plane's step there.
        case step(at: C.Instant)
        /// Ticks are unanswered: wait for an answer, or until this wall instant, then decide again.
        case waitForAnswers(until: C.Instant)
        /// Nothing to do until a request changes something (the virtual clock stays at ``now``).
        case idle
    }

    /// One decision: the action, and the links given up on just before it.
    package struct Decision: Hashable, Sendable {
        package var action: Action
        /// Links whose unanswered tick outlasted ``Settings/answerTimeout`` (wall): their
        /// intervals are not waited for any more.
        package var gaveUpOn: [LinkID] = []
    }

    private let settings: Settings
    /// The virtual now: the latest instant time moved to.
    package private(set) var now: C.Instant
    /// Where pending `Advance` requests end, if any time is still to advance.
    package private(set) var advancingTo: C.Instant?
    /// Since when (wall) unanswered ticks are waited for, with the deadline.
    private var waitingUntil: C.Instant?
    /// The interval of each link given up on (forgotten once that link's wait is over).
    private var gaveUp: [LinkID: UInt64] = [:]

    /// A driver whose virtual time starts at `epoch`.
    package init(settings: Settings, epoch: C.Instant) {
        self.settings = settings
        self.now = epoch
    }

    /// `Compositor/Advance`: time moves on by `duration` once no link ticks (added to any
    /// advance still pending).
    package mutating func advance(by duration: Duration) {
        advancingTo = max(advancingTo ?? now, now).advanced(by: duration)
    }

    /// Decides what happens next.
    /// - Parameters:
    ///   - unanswered: the delivered ticks of unpaused links not yet answered (``Compositor/unansweredTicks``).
    ///   - linksTick: whether any unpaused link exists.
    ///   - nextDue: the first instant the tick plane has something to do (`nil`: nothing).
    ///   - wallNow: the wall clock now.
    package mutating func decide(unanswered: [UnansweredTick], linksTick: Bool, nextDue: C.Instant?, wallNow: C.Instant) -> Decision {
        if !gaveUp.isEmpty {
            // Kept while that same wait is still unanswered; a set, as walking `unanswered`
            // for each entry was O(links²) a step, and a turn may take 10,000 steps.
            let outstanding = Set(unanswered)
            gaveUp = gaveUp.filter { outstanding.contains(UnansweredTick(link: $0.key, interval: $0.value)) }
        }
        let pending = unanswered.filter { gaveUp[$0.link] != $0.interval }
        var decision = Decision(action: .idle)
        if pending.isEmpty {
            waitingUntil = nil
        } else {
            let deadline = waitingUntil ?? wallNow.advanced(by: settings.answerTimeout)
            if wallNow < deadline {
                waitingUntil = deadline
                decision.action = .waitForAnswers(until: deadline)
                return decision
            }
            waitingUntil = nil
            for tick in pending { gaveUp[tick.link] = tick.interval }
            decision.gaveUpOn = pending.map(\.link)
        }
        if linksTick {
            guard let nextDue else { return decision }
            now = max(now, nextDue)
            if let target = advancingTo, target <= now { advancingTo = nil }
            decision.action = .step(at: now)
            return decision
        }
        guard let target = advancingTo else { return decision }
        if let nextDue, nextDue <= target {
            now = max(now, nextDue)
            decision.action = .step(at: now)
            return decision
        }
        now = max(now, target)
        advancingTo = nil
        return decision
    }
}

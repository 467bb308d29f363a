import FrameRateModel
import FrameRateProtocol
import NIOCore

/// Moves a `--clock virtual` daemon's time, on the control loop: it asks the
/// ``VirtualClockDriver`` what to do and does it (sets the ``VirtualClock``, runs the
/// tick plane's ``TickEngine/step(at:previousStepFinished:)`` right here, arms the wall-time answer timeout).
///
/// Why on the control loop: every request is handled there, so running the steps there
/// too serializes them with the requests. ``CompositorCore`` calls ``evaluate()`` after
/// each request line (after its reply is written), after a connection closes and when the
/// timeout fires, so a request always lands between two steps at a point fixed by the
/// order of lines, never by thread scheduling, and a reply always precedes the ticks its
/// request let through. Confined to the control loop's thread.
final class VirtualTimeKeeper {
    let clock: VirtualClock
    private var driver: VirtualClockDriver<MonotonicClock>
    private let engine: TickEngine
    private let shared: SharedModel
    private let eventLoop: any EventLoop
    /// Called with the links given up on (their tick outlasted the answer timeout).
    private let gaveUp: ([LinkID]) -> Void
    /// The armed answer timeout and its wall deadline.
    private var timeout: (task: Scheduled<Void>, deadline: MonotonicClock.Instant)?
    /// Set while ``evaluate()`` runs: a step's reports may reach code that asks again.
    private var evaluating = false

    /// At most this many steps run in one call of ``evaluate()`` (a loop of steps that
    /// deliver nothing to wait for, e.g. every link's connection unwritable); the rest
    /// continue on a later turn of the loop, so other connections are served meanwhile.
    static let stepsPerTurn = 10_000

    init(
        epoch: MonotonicClock.Instant, answerTimeout: Duration, clock: VirtualClock, engine: TickEngine, shared: SharedModel,
        eventLoop: any EventLoop, gaveUp: @escaping ([LinkID]) -> Void
    ) {
        self.driver = VirtualClockDriver(settings: .init(answerTimeout: answerTimeout), epoch: epoch)
        self.clock = clock
        self.engine = engine
        self.shared = shared
        self.eventLoop = eventLoop
        self.gaveUp = gaveUp
    }

    /// Where pending Advance requests end, if time is still to move.
    var advancingTo: MonotonicClock.Instant? { driver.advancingTo }

    /// `Compositor/Advance`: the next ``evaluate()`` moves time on by `duration` (when no link ticks).
    func advance(by duration: Duration) {
        driver.advance(by: duration)
    }

    /// Lets time move as far as the driver allows now.
    func evaluate() {
        eventLoop.preconditionInEventLoop()
        guard !evaluating else { return }
        evaluating = true
        defer { evaluating = false }
        for _ in 0..<Self.stepsPerTurn {
            let (unanswered, linksTick, due) = shared.read {
                ($0.compositor.unansweredTicks, $0.compositor.hasUnpausedLink, $0.driver.nextDeadline(compositor: $0.compositor))
            }
            let decision = driver.decide(unanswered: unanswered, linksTick: linksTick, nextDue: due, wallNow: MonotonicClock.now)
            if !decision.gaveUpOn.isEmpty { gaveUp(decision.gaveUpOn) }
            clock.set(driver.now)
            switch decision.action {
            case .step(let instant):
                disarmTimeout()
                engine.step(at: instant)
            case .waitForAnswers(let deadline):
                armTimeout(at: deadline)
                return
            case .idle:
                disarmTimeout()
                return
            }
        }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute { bound.value.evaluate() }
    }

    private func armTimeout(at deadline: MonotonicClock.Instant) {
        if let timeout, timeout.deadline == deadline { return }
        timeout?.task.cancel()
        let delay = TimeAmount.nanoseconds(max(0, deadline.nanoseconds - MonotonicClock.now.nanoseconds))
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let task = eventLoop.scheduleTask(in: delay) {
            bound.value.timeout = nil
            bound.value.evaluate()
        }
        timeout = (task, deadline)
    }

    private func disarmTimeout() {
        timeout?.task.cancel()
        timeout = nil
    }
}

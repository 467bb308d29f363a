import FrameRateModel
import FrameRateProtocol
import Logging

extension CompositorCore {
    /// The clock this daemon runs on, as `Compositor/GetState` names it.
    var clockName: String { virtualTime == nil ? ServerClock.monotonic.name : "virtual" }

    /// Wall time (`CLOCK_MONOTONIC`) for what must not follow a virtual clock (a turn's
    /// work budget); on a monotonic daemon, the daemon's own `now` (stepped in tests).
    func wallNow() -> MonotonicClock.Instant {
        virtualTime == nil ? now() : MonotonicClock.now
    }

    /// Whether the daemon runs on a virtual clock (`--clock virtual`).
    var isVirtualClock: Bool { virtualTime != nil }

    /// On a virtual-clock daemon, lets time move now that a request was handled (its reply
    /// written) or a connection closed; on a monotonic daemon, nothing.
    func virtualTimeMayAdvance() {
        virtualTime?.evaluate()
    }

    /// `Compositor/Advance {"seconds": s}`: on a virtual-clock daemon with no unpaused
    /// link, time moves on by `s` right after the reply (every instant due on the way is
    /// processed in order); the reply says where time will stand.
    func advance(_ params: JSONValue?) throws(RPCError) -> JSONValue {
        let request = try AdvanceRequest(params: params)
        guard let virtualTime else {
            throw .status(
                .failedPrecondition,
                "this daemon runs on CLOCK_MONOTONIC; Advance moves a virtual clock only: start framerated with --clock virtual"
            )
        }
        guard !shared.read({ $0.compositor.hasUnpausedLink }) else {
            throw .status(
                .failedPrecondition,
                "unpaused links are ticking, so virtual time already moves from vsync to vsync as their ticks are answered; "
                    + "Advance moves it only when no link ticks: pause or invalidate them first"
            )
        }
        let from = max(virtualTime.advancingTo ?? now(), now())
        guard from.seconds + request.seconds <= VirtualClock.latest.seconds else {
            throw .status(
                .outOfRange,
                "virtual time stands at \(FrameRateMath.format(from.seconds)) s; it may not pass \(FrameRateMath.format(VirtualClock.latest.seconds)) s (the pacers count nanoseconds since the epoch within about 2.3·10⁹ s): restart the daemon"
            )
        }
        virtualTime.advance(by: .nanoseconds(Int64((request.seconds * 1e9).rounded())))
        let target = virtualTime.advancingTo ?? now()
        return ["now": JSONValue(target.seconds)]
    }

    /// The `GetState` cache key for `generation` at `elapsed` since the start: the
    /// generation alone on the real clock (the cache's lifetime bounds the age of a reused
    /// encoding), plus the exact virtual instant on a virtual clock (its time stands still
    /// between steps, and `now` in the state must be exact).
    func stateEdition(generation: UInt64, elapsed: Duration) -> StateEdition {
        guard virtualTime != nil else { return StateEdition(generation: generation) }
        return StateEdition(generation: generation, virtualInstant: elapsed)
    }

    /// Logs that the links' unanswered ticks outlasted `--virtual-timeout` and time moved on.
    func logGaveUp(on links: [LinkID], timeout: Duration) {
        logger.info(
            "virtual time moved on without an answer from link(s) \(links.map { "\($0.rawValue)" }.joined(separator: ", ")) after \(timeout) (--virtual-timeout): their intervals count as skipped while they stay busy",
            metadata: ["event": "virtual-answer-timeout", "links": "\(links.map { "\($0.rawValue)" }.joined(separator: ","))"]
        )
    }
}

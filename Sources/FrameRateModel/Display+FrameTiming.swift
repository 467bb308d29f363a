extension Display {
    /// The rate change the governor has decided and not applied yet, with the vsync it is
    /// due at (index and time since the origin): a decrease waiting out its dwell, at the
    /// first vsync at or after its deadline (as ``nextEventfulVsync`` schedules it). An
    /// increase is applied at the vsync after it is decided, so at a tick none is pending.
    func pendingChangeVsync() -> (index: UInt64, time: Duration, rate: Double)? {
        guard let target = governor.target, target.refreshRate < refreshRate, !FrameRateMath.equal(target.refreshRate, refreshRate),
            let deadline = governor.pendingDecreaseDeadline
        else { return nil }
        var due = timeline.firstVsync(atOrAfter: deadline)
        // The governor applies the change at the first vsync whose instant is at or after the
        // deadline; `firstVsync` divides in floating point and can land one vsync short of it.
        while due.instant < deadline { due = timeline.vsync(index: due.index + 1) }
        return (due.index, origin.duration(to: due.instant), target.refreshRate)
    }

    /// Fills `tick`'s frame latency, timeline count and schedule for `link`, which asked for
    /// more than one timeline or for latency 2: `schedule` (the tick's grid and divisor) with
    /// `change`, the decided rate change, applied at the link's cadence at the new rate.
    func frameTiming(of link: Link, schedule: FrameSchedule, change: (index: UInt64, time: Duration, rate: Double)?, into tick: inout Tick<C.Instant>) {
        tick.frameLatency = link.configuration.frameLatency
        tick.timelineCount = link.configuration.timelines
        guard let change else {
            tick.schedule = schedule
            return
        }
        let grid = FrameSchedule.Grid(
            anchor: change.index, time: change.time, period: VsyncTimeline<C.Instant>.period(of: change.rate),
            divisor: cadence(of: link, refresh: change.rate).divisor
        )
        tick.schedule = FrameSchedule(tick: schedule.tick, change: grid)
    }


    /// The presentation time (since the origin) a `Present` of `delivered` with `vsyncID` aims at.
    /// - Throws: ``CompositorError/vsyncNotOffered(_:sequence:vsyncID:offered:)`` when `vsyncID`
    ///   is not one of the tick's possible timelines.
    func aimedPresentation(of delivered: DeliveredTick, vsyncID: UInt64, link: LinkID) throws(CompositorError) -> Duration {
        let schedule = delivered.schedule ?? FrameSchedule(tick: .init(anchor: 0, time: .zero, period: .zero, divisor: 1))
        guard let frame = FrameTimelines.presentation(of: vsyncID, schedule: schedule, latency: delivered.latency) else {
            let offered = schedule.frames(FrameSchedule.maximumFrames + delivered.latency - 1).dropFirst(delivered.latency - 1).map { $0.vsyncID }
            throw .vsyncNotOffered(link, sequence: delivered.sequence, vsyncID: vsyncID, offered: offered)
        }
        return frame.time
    }
}

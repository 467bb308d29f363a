import NIOCore

/// Control-loop work split into bounded turns (trace flushes, held-back announcements)
/// goes on in a later turn, after the loop has served its sockets.
extension CompositorCore {
    /// Work that goes on in a later turn of the control loop.
    enum LaterTurnWork: Hashable {
        /// ``flushTraces()``: the traces' backlogs.
        case traceFlush
        /// ``announcePending()``: the queued held-back and resumed links.
        case announcements
    }

    /// Runs `work` 1 ms from now, unless a run of it is already scheduled. Scheduled with a
    /// delay, not `eventLoop.execute`: NIO runs the tasks queued meanwhile in the same loop
    /// tick, before it polls any socket, so the rest of the work would not wait for anyone.
    func continueInLaterTurn(_ work: LaterTurnWork) {
        guard laterTurnWork.insert(work).inserted else { return }
        let loop = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.scheduleTask(in: .milliseconds(1)) {
            loop.value.laterTurnWork.remove(work)
            switch work {
            case .traceFlush: loop.value.flushTraces()
            case .announcements: loop.value.announcePending()
            }
        }
    }
}

package import FrameRateModel
package import FrameRateProtocol
package import FrameRatePosix
import Synchronization

/// What the control loop and the tick plane share, behind one lock: the compositor model,
/// the fan-out driver and each connection's writer.
///
/// The lock is held only for model work (microseconds: a registration, one vsync's pacing),
/// never for I/O, encoding or logging, so neither side can hold the other up for long.
/// Lock order: a ``SocketWriter``'s lock may be held when this one is taken (a writer's
/// writability observer reports to the driver), never the other way round.
package struct DaemonState: Sendable {
    /// The compositor: links, arbitration, pacing, vsync grids.
    package var compositor: Compositor<MonotonicClock>
    /// The tick plane's schedule, unwritable set and watchdog.
    package var driver: FanOutDriver<MonotonicClock>
    /// Each connection's writer, by owner. The tick plane holds these unretained while it
    /// sends a batch, so a writer leaves only through ``removeWriter(of:)``.
    package private(set) var writers = OwnerTable<SocketWriter>()
    /// The reply writers of connections with a tick socket, by owner: for them ``writers``
    /// holds the tick socket's writer, and these are flushed beside it (both report
    /// writability under the owner's token).
    package private(set) var replyWriters: [OwnerID: SocketWriter] = [:]
    /// Writers removed from ``writers`` that a batch not yet sent may name.
    private var retiredWriters = RetiredWriters()
    /// How far the fan-out threads have sent the batches built so far.
    package let progress: FanOutProgress
    /// Tick batches built so far: the number of the latest (see ``beginBatch()``).
    private(set) var batchesBuilt: UInt64 = 0
    /// Bumped by every change that ``CompositorState`` shows (links, caps, rates), so a
    /// snapshot encoded for one generation can be reused until the next.
    var generation: UInt64 = 0
    /// When the tick plane sleeps until (`nil`: no deadline), so a change that makes
    /// something due earlier wakes it, and others don't.
    var tickPlaneSleepsUntil: MonotonicClock.Instant?

    /// - Parameter fanOutThreads: the most fan-out threads the tick plane may run.
    package init(compositor: Compositor<MonotonicClock>, driver: FanOutDriver<MonotonicClock>, fanOutThreads: Int) {
        self.compositor = compositor
        self.driver = driver
        self.progress = FanOutProgress(helpers: fanOutThreads - 1)
    }

    /// Stores the writer of a new connection.
    package mutating func addWriter(_ writer: SocketWriter, for owner: OwnerID) {
        writers[owner] = writer
    }

    /// The connection's ticks go to `tickWriter` from now on (its tick socket); its own
    /// writer keeps the replies. Only before the fan-out ever had a tick for it.
    package mutating func moveTicks(of owner: OwnerID, to tickWriter: SocketWriter) {
        if let own = writers[owner] { replyWriters[owner] = own }
        writers[owner] = tickWriter
    }

    /// Takes the writer of a closed connection out of ``writers``, keeping it alive until
    /// the batches built so far, which may name it, have been sent: at once when none is
    /// in flight (the caller still holds the writer, so nothing is freed under the lock).
    /// - Returns: the writers let go (this one and earlier ones), for the caller to drop.
    @discardableResult
    package mutating func removeWriter(of owner: OwnerID) -> [SocketWriter] {
        replyWriters[owner] = nil
        guard let writer = writers.removeValue(forKey: owner) else { return [] }
        retiredWriters.retire(writer, lastBatch: batchesBuilt)
        return retiredWriters.release(sentThrough: progress.sentThrough)
    }

    /// Writers removed and waiting for batches to be sent.
    var retiredWriterCount: Int { retiredWriters.count }

    /// Numbers a new tick batch, built now from ``writers``.
    mutating func beginBatch() -> UInt64 {
        batchesBuilt += 1
        return batchesBuilt
    }

    /// Takes out the removed writers that no unsent batch names, for the caller to drop
    /// after releasing the lock.
    mutating func releaseWriters() -> [SocketWriter] {
        retiredWriters.release(sentThrough: progress.sentThrough)
    }
}

/// The lock around ``DaemonState``, plus the tick plane's wake-up.
package final class SharedModel: Sendable {
    private let state: Mutex<DaemonState>
    /// Wakes the tick plane's leader thread.
    package let waiter: EventWaiter
    /// The running traces' records (its own lock).
    let tracer: TraceRecorder
    /// Each connection's word for unlocked tick claims, by slot (atomic words, no lock).
    package let gates: TickGates

    /// - Parameter connections: the most connections served at once (the slots of ``gates``).
    package init(_ state: DaemonState, waiter: EventWaiter, connections: Int, tracer: TraceRecorder = TraceRecorder()) {
        self.state = Mutex(state)
        self.waiter = waiter
        self.tracer = tracer
        self.gates = TickGates(capacity: connections)
    }

    /// Reads the state (no change, no wake-up).
    package func read<T>(_ body: (borrowing DaemonState) throws -> T) rethrows -> T {
        try state.withLock { try body($0) }
    }

    /// Changes the state, then wakes the tick plane if the change made something due
    /// before the instant it sleeps until (a new link, an earlier rate change).
    /// - Parameter shown: whether the change is one ``CompositorState`` shows (bumps the
    ///   generation, so the next GetState is encoded anew). The tick plane's own
    ///   bookkeeping (a connection's writability) is not: bumping for it would make every
    ///   GetState reply above the high-water mark invalidate its own cached encoding.
    func change<T, E: Error>(shown: Bool = true, _ body: (inout DaemonState) throws(E) -> T) throws(E) -> T {
        let (result, wake) = try state.withLock { (state) throws(E) -> (T, Bool) in
            let result = try body(&state)
            if shown { state.generation &+= 1 }
            guard let next = state.driver.nextDeadline(compositor: state.compositor) else { return (result, false) }
            if let sleeping = state.tickPlaneSleepsUntil, sleeping <= next { return (result, false) }
            state.tickPlaneSleepsUntil = next
            return (result, true)
        }
        if wake { waiter.wake() }
        return result
    }

    /// Flushes each connection whose socket `readiness` (a wait of ``waiter``) reports
    /// writable again: the tick plane's leader does it after each wait, and on a
    /// virtual-clock daemon ``WritabilityFlusher`` does.
    /// - Returns: whether there was any.
    @discardableResult
    package func flushWritable(_ readiness: EventWaiter.Readiness) -> Bool {
        for token in readiness.writable {
            // Flushed outside the model lock: a flush is a `send`, under the writer's own lock.
            let owner = OwnerID(rawValue: token)
            let (writer, replyWriter) = read { ($0.writers[owner], $0.replyWriters.isEmpty ? nil : $0.replyWriters[owner]) }
            writer?.flush()
            replyWriter?.flush()
        }
        return !readiness.writable.isEmpty
    }

    /// Changes the state without bumping the generation or waking the tick plane (the tick
    /// plane's own bookkeeping, and frame-done reports, which change nothing shown).
    func update<T, E: Error>(_ body: (inout DaemonState) throws(E) -> T) throws(E) -> T {
        try state.withLock { (state) throws(E) -> T in try body(&state) }
    }
}

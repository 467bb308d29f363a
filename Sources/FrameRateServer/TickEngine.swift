package import FrameRateModel
package import FrameRatePosix
package import FrameRateProtocol
import NIOCore
import Synchronization

/// The tick plane: dedicated threads that deliver every link's ticks on its display's
/// vsyncs, which nothing the control loop does can preempt.
///
/// One leader thread runs the ``FanOutDriver``: it sleeps in an ``EventWaiter`` until the
/// next instant something is due (a vsync at which a link ticks, a rate change, a
/// watchdog ping, an unwritable connection's deadline), takes the model lock for the
/// vsync's pacing (microseconds), releases it, and then encodes and sends. With
/// `workers > 1`, each connection belongs to one shard (`slot % workers`) and the leader
/// hands the other shards' ticks to helper threads, so the `send`s of one vsync run on
/// several cores. The leader also flushes connections whose socket buffers filled up,
/// when epoll reports them writable.
///
/// ``step(at:previousStepFinished:)`` is one iteration without the wait: the server harness calls it with
/// exact instants. ``turn(now:finished:wait:)`` adds the wait and the flushes; ``run()``
/// loops it on the leader thread.
package final class TickEngine: Sendable {
    /// What the control loop hears from the tick plane. Called on a tick-plane thread;
    /// each must hand its work to the control loop and return at once.
    package struct Events: Sendable {
        /// A display's refresh rate changed at a vsync: the vsync it took effect at (on
        /// `CLOCK_MONOTONIC`), which a late wake-up can leave a period or more before now.
        var rateChanged: @Sendable (DisplayID, RefreshRateChange, _ vsync: MonotonicClock.Instant) -> Void = { _, _, _ in }
        /// A connection has not read for the unwritable timeout: close it.
        var disconnect: @Sendable (OwnerID) -> Void = { _ in }
        /// The tick plane is alive (watchdog).
        var watchdog: @Sendable () -> Void = {}
        /// The tick plane reached a deadline `lateness` after it was due, at least one vsync
        /// period of a display it delivered ticks for: the vsyncs it passed over show in
        /// those links' next ticks, in `skipped`. `busy` is how long after that deadline the
        /// previous iteration was still sending (`nil`: it had finished before the deadline,
        /// so the wake-up itself came late).
        var lateWake: @Sendable (_ lateness: Duration, _ busy: Duration?) -> Void = { _, _ in }
        /// A fan-out thread's io_uring failed while sending: it sends with `send(2)` from
        /// now on, for the reason given.
        var sendPathFellBack: @Sendable (_ reason: String) -> Void = { _ in }
        /// Links of a display have waited 1 s for their clients to answer their latest tick
        /// (``HeldBackLink``), and get no ticks until they do: every such link of one vsync
        /// at once, after that vsync's ticks are sent.
        var heldBack: @Sendable (DisplayID, [HeldBackLink]) -> Void = { _, _ in }
        /// Links of a display reported by ``heldBack`` tick again (``ResumedLink``): every
        /// such link of one vsync at once, after that vsync's ticks are sent.
        var resumed: @Sendable (DisplayID, [ResumedLink]) -> Void = { _, _ in }

        package init(
            rateChanged: @escaping @Sendable (DisplayID, RefreshRateChange, _ vsync: MonotonicClock.Instant) -> Void = { _, _, _ in },
            disconnect: @escaping @Sendable (OwnerID) -> Void = { _ in },
            watchdog: @escaping @Sendable () -> Void = {},
            lateWake: @escaping @Sendable (_ lateness: Duration, _ busy: Duration?) -> Void = { _, _ in },
            sendPathFellBack: @escaping @Sendable (_ reason: String) -> Void = { _ in },
            heldBack: @escaping @Sendable (DisplayID, [HeldBackLink]) -> Void = { _, _ in },
            resumed: @escaping @Sendable (DisplayID, [ResumedLink]) -> Void = { _, _ in }
        ) {
            self.rateChanged = rateChanged
            self.disconnect = disconnect
            self.watchdog = watchdog
            self.lateWake = lateWake
            self.sendPathFellBack = sendPathFellBack
            self.heldBack = heldBack
            self.resumed = resumed
        }
    }

    /// A tick's own fields with the connection it goes to and which of the vsync's shared
    /// encoded field segments it uses (an index: no reference to retain per tick). Only
    /// what differs from link to link is copied, not the whole `Tick`.
    struct Delivery {
        let link: UInt64
        let sequence: UInt64
        let skipped: UInt64
        /// Not retained, and not touched until the send: the writer stays alive until the
        /// batch has been sent (``DaemonState/removeWriter(of:)``). A retain per connection
        /// and vsync was the first touch of a cold object, under the model lock.
        let writer: Unmanaged<SocketWriter>
        /// The connection: its slot in ``DaemonState/writers`` (where the fan-out keeps what
        /// it needs of the connection, beside the other connections') and its tag in ``TickGates``.
        let owner: OwnerID
        let fields: UInt32

        /// The connection's slot in ``DaemonState/writers`` and ``SharedModel/gates``.
        var connection: Int { OwnerTable<SocketWriter>.slot(of: owner) }
    }

    /// One vsync's deliveries for one shard, with the shared field segments they index.
    struct Batch {
        var deliveries: [Delivery] = []
        var fields: [ByteBuffer] = []
        /// The frames this vsync showed on the shard's connections: their `Presented`
        /// notifications go out after the shard's ticks, on the thread that sends them.
        var presented: [Presented] = []
    }

    private let shared: SharedModel
    private let events: Events
    private let helpers: [FanOutHelper]
    /// Where the leader and the helpers record the batches they sent.
    private let progress: FanOutProgress
    /// The leader's send side (shard 0); only the leader thread (or the harness, stepping) takes it.
    private let outbox: Mutex<TickOutbox>
    private let stopping = Atomic<Bool>(false)

    /// - Parameters:
    ///   - workers: fan-out threads in all (the leader plus `workers - 1` helpers).
    ///   - sendPath: how the threads hand their sends to the kernel, if it allows
    ///     (``BatchSender/Path/ioUring`` falls back to `send` calls where io_uring is unavailable).
    package init(shared: SharedModel, workers: Int, sendPath: BatchSender.Path = .ioUring, events: Events) throws(PosixError) {
        self.shared = shared
        self.events = events
        let progress = shared.read { $0.progress }
        precondition(workers - 1 <= progress.helpers.count, "more fan-out threads than the model was made for")
        var helpers: [FanOutHelper] = []
        for index in 0..<max(0, workers - 1) {
            helpers.append(
                try FanOutHelper(
                    sendPath: sendPath, gates: shared.gates, progress: progress.helpers[index], sendPathFellBack: events.sendPathFellBack
                ))
        }
        self.helpers = helpers
        self.progress = progress
        self.outbox = Mutex(TickOutbox(path: sendPath, gates: shared.gates))
    }

    /// The send path in use, and why io_uring is not if it was asked for.
    package var sendPath: (path: BatchSender.Path, fallbackReason: String?) {
        outbox.withLock { ($0.sender.path, $0.sender.fallbackReason) }
    }

    /// The number of fan-out threads (leader included).
    var workerCount: Int { helpers.count + 1 }

    /// The nice value the fan-out threads ask for: ahead of the control loop, the
    /// clients and anything else at normal priority, so that a busy machine delays a
    /// vsync less (root has the right; an unprivileged service keeps normal priority).
    static let fanOutNice: Int32 = -10

    /// Runs the leader loop until ``stop()``; spawns and joins the helper threads.
    /// - Parameter prioritized: called once with whether the threads' priority could be raised.
    func run(now: @Sendable () -> MonotonicClock.Instant, prioritized: (Bool) -> Void = { _ in }) {
        prioritized(OSThread.raiseCurrentThreadPriority(nice: Self.fanOutNice))
        let helperThreads = startHelperThreads()
        defer { helperThreads.stopAndJoin() }
        var finished: MonotonicClock.Instant?
        while !stopping.load(ordering: .acquiring) {
            turn(now: now, finished: &finished) { shared.waiter.wait(until: $0?.nanoseconds) }
        }
    }

    /// One turn of the leader's loop: a ``step(at:previousStepFinished:)`` at `now()`, a
    /// wait until the deadline it returns, then a flush of every connection the wait found
    /// writable again.
    /// - Parameters:
    ///   - now: reads `CLOCK_MONOTONIC` (the daemon) or a stepped clock (tests): before the
    ///     step, after it, and after the flushes if there were any.
    ///   - finished: when the previous turn's own work ended (`nil`: unknown). Set to when
    ///     this turn's ended: after its sends, or, if it flushed, after its flushes. A
    ///     deadline passed before then was reached late because the fan-out was busy, not
    ///     because it woke late; flushing slow readers is work too.
    ///   - wait: waits until the instant given (`nil`: until woken) and says what ended it.
    package func turn(
        now: () -> MonotonicClock.Instant, finished: inout MonotonicClock.Instant?,
        wait: (MonotonicClock.Instant?) -> EventWaiter.Readiness
    ) {
        let deadline = step(at: now(), previousStepFinished: finished)
        finished = now()
        if shared.flushWritable(wait(deadline)) { finished = now() }
    }

    /// The helpers' running threads, as ``startHelperThreads()`` started them.
    package final class HelperThreads: Sendable {
        private let helpers: [FanOutHelper]
        /// Taken by the first ``stopAndJoin()``: a thread is joined once.
        private let threads: Mutex<[OSThread]?>

        fileprivate init(helpers: [FanOutHelper], threads: [OSThread]) {
            self.helpers = helpers
            self.threads = Mutex(threads)
        }

        /// Stops the helpers (each sends what it was handed first) and joins their threads;
        /// later calls do nothing.
        package func stopAndJoin() {
            guard let threads = threads.withLock({ $0.take() }) else { return }
            for helper in helpers { helper.stop() }
            for thread in threads { thread.join() }
        }
    }

    /// Starts the helpers' threads: ``run(now:prioritized:)`` does, and so does a caller
    /// that steps the leader itself (the server harness, with several fan-out threads).
    package func startHelperThreads() -> HelperThreads {
        HelperThreads(helpers: helpers, threads: Self.startThreads(of: helpers, spawn: OSThread.spawn))
    }

    /// Starts each helper's thread (`fanout-1`, `fanout-2`, …) with `spawn`.
    ///
    /// A helper whose thread cannot be started (the process's thread limit) is told to
    /// send its shard on the leader's thread: its ticks, and the closed connections'
    /// writers that wait for them to be sent (``RetiredWriters``), would otherwise queue
    /// for ever.
    /// - Returns: the threads started, to stop and join.
    static func startThreads(
        of helpers: [FanOutHelper], spawn: (_ name: String, _ body: @escaping @Sendable () -> Void) throws(PosixError) -> OSThread
    ) -> [OSThread] {
        var threads: [OSThread] = []
        for (index, helper) in helpers.enumerated() {
            do {
                threads.append(
                    try spawn("fanout-\(index + 1)") {
                        OSThread.raiseCurrentThreadPriority(nice: Self.fanOutNice)
                        helper.run()
                    })
            } catch {
                helper.sendOnSubmittingThread()
            }
        }
        return threads
    }

    /// Ends ``run(now:)`` (from any thread); the driver stops delivering at once.
    func stop() {
        shared.update { $0.driver.stop() }
        stopping.store(true, ordering: .releasing)
        shared.waiter.wake()
    }

    /// One iteration at `now`: processes what is due, delivers it, reports the rest.
    /// - Parameter previousStepFinished: when the previous iteration had sent its share of
    ///   ticks (`nil`: unknown, or none ran); tells a late wake-up from an overrun.
    /// - Returns: when to run the next one (`nil`: only when woken).
    @discardableResult
    package func step(at now: MonotonicClock.Instant, previousStepFinished: MonotonicClock.Instant? = nil) -> MonotonicClock.Instant? {
        let (wake, writers, presented, batch, released, planned) = shared.update {
            state -> (FanOutDriver<MonotonicClock>.Wake, [[Unmanaged<SocketWriter>?]], [Presented], UInt64, [SocketWriter], MonotonicClock.Instant?) in
            // When this wake-up was due: the earliest deadline of the state as it stands (a
            // deadline planned earlier may since have gone, with the links it was for).
            let planned = state.driver.nextDeadline(compositor: state.compositor)
            let released = state.releaseWriters()
            let wake = state.driver.wake(at: now, compositor: &state.compositor)
            state.tickPlaneSleepsUntil = wake.sleepUntil
            var writers: [[Unmanaged<SocketWriter>?]] = []
            var presented: [Presented] = []
            for index in wake.reports.indices {
                writers.append(wake.reports[index].ticks.map { state.writers.unretained($0.owner) })
                if wake.reports[index].rateChange != nil { state.generation &+= 1 }
                Self.collectPresented(wake.reports[index], writers: state.writers, into: &presented)
            }
            return (wake, writers, presented, writers.isEmpty ? 0 : state.beginBatch(), released, planned)
        }
        // Dropped here, outside the lock: no batch can name them any more.
        withExtendedLifetime(released) {}
        var shortestPeriod: Duration?
        var shards = [Batch](repeating: Batch(), count: workerCount)
        // Each report is read in place, by index: binding it (`for report in`) copies it.
        for index in wake.reports.indices {
            Self.plan(wake.reports[index], writers: writers[index], sentAt: now, into: &shards)
            for (change, vsync) in wake.reports[index].rateChanges { events.rateChanged(wake.reports[index].display, change, vsync) }
            let period = wake.reports[index].vsync.duration(to: wake.reports[index].nextVsync)
            shortestPeriod = shortestPeriod.map { Swift.min($0, period) } ?? period
        }
        for action in wake.actions {
            switch action {
            case .disconnect(let owner): events.disconnect(owner)
            case .pingWatchdog: events.watchdog()
            }
        }
        for entry in presented {
            shards[Self.shard(of: entry.presentation.owner, among: shards.count)].presented.append(entry)
        }
        if let planned, let shortestPeriod, case let lateness = planned.duration(to: now), lateness >= shortestPeriod {
            let busy = previousStepFinished.map { planned.duration(to: $0) }.flatMap { $0 > .zero ? $0 : nil }
            events.lateWake(lateness, busy)
        }
        if !wake.reports.isEmpty {
            for (index, helper) in helpers.enumerated() where !shards[index + 1].deliveries.isEmpty || !shards[index + 1].presented.isEmpty {
                helper.submit(shards[index + 1], number: batch)
            }
            outbox.withLock { Self.send(shards[0], number: batch, through: &$0, sendPathFellBack: events.sendPathFellBack) }
            // Releasing: the hand-overs above are visible to whoever reads this (FanOutProgress).
            progress.leaderSent.store(batch, ordering: .releasing)
        }
        // After the sends, one call per display and kind: a client that holds back a
        // thousand links at one vsync (each leaves a tick unanswered) made a thousand
        // hops to the control loop before anyone's ticks were sent.
        for index in wake.reports.indices {
            let display = wake.reports[index].display
            if !wake.reports[index].heldBack.isEmpty { events.heldBack(display, wake.reports[index].heldBack) }
            if !wake.reports[index].resumed.isEmpty { events.resumed(display, wake.reports[index].resumed) }
        }
        if shared.tracer.isActive { Self.trace(wake, into: shared.tracer) }
        return wake.sleepUntil
    }

    /// Pairs each tick of `report` with its writer and the encoded fields it shares with
    /// every tick of the same cadence (encoded once per vsync and cadence), by shard.
    /// Links with frame latency 2 or several timelines share a segment with the links of
    /// the same cadence, latency, timeline count and schedule; their timelines leave out
    /// deadlines already past at `sentAt`.
    private static func plan(
        _ report: VsyncReport<MonotonicClock.Instant>, writers: [Unmanaged<SocketWriter>?], sentAt: MonotonicClock.Instant,
        into shards: inout [Batch]
    ) {
        let allocator = ByteBufferAllocator()
        // Each distinct target (cadence), boosted flag and frame timing of this vsync, by
        // its segment's index in every shard's list, and the segment of each. Ticks come
        // in registration order, and runs of one segment are the rule: the last segment
        // is checked first, the table only when it differs. (A walk of the segments cost
        // ticks × segments when one user interleaved its links' divisors, boosts and
        // timelines: up to about 480 segments at a vsync where they all tick. The table is
        // no dearer on a usual vsync: `framebench tick-cost` under callgrind counted 68,000
        // fewer instructions in `plan` over 72 vsyncs of 1,000 links, and about 30,000
        // more in hashing. The last segment's parts are kept apart and compared field by
        // field: building a `SegmentKey` for every tick and comparing it whole cost 5 %
        // more instructions a tick.)
        var targets: [MonotonicClock.Instant] = []
        var boosted: [Bool] = []
        var timings: [FrameTimingKey?] = []
        var segments: [SegmentKey: Int] = [:]
        let base = shards.first?.fields.count ?? 0
        for index in shards.indices {
            shards[index].deliveries.reserveCapacity(shards[index].deliveries.count + report.ticks.count / shards.count + 1)
        }
        var last = -1
        // Each tick is read in place: iterating the array copied every `Tick` (about 230 bytes).
        report.ticks.withUnsafeBufferPointer { ticks in
            for index in 0..<Swift.min(ticks.count, writers.count) {
                guard let writer = writers[index] else { continue }
                let timing = FrameTimingKey(ticks[index])
                if last < 0 || targets[last] != ticks[index].targetTimestamp || boosted[last] != ticks[index].boosted || timings[last] != timing {
                    let key = SegmentKey(target: ticks[index].targetTimestamp, boosted: ticks[index].boosted, timing: timing)
                    if let found = segments[key] {
                        last = found
                    } else {
                        let fields = TickLineEncoder.sharedFields(
                            timestamp: ticks[index].timestamp.nanoseconds, targetTimestamp: ticks[index].targetTimestamp.nanoseconds,
                            duration: WireTime.nanoseconds(of: ticks[index].duration), refreshRate: ticks[index].refreshRate,
                            callbackRate: ticks[index].callbackRate, boosted: ticks[index].boosted,
                            targetPresentationTimestamp: timing == nil ? nil : ticks[index].targetPresentationTimestamp.nanoseconds,
                            timelines: timing == nil ? [] : encodedTimelines(of: ticks[index], sentAt: sentAt), allocator: allocator
                        )
                        for each in shards.indices { shards[each].fields.append(fields) }
                        targets.append(ticks[index].targetTimestamp)
                        boosted.append(ticks[index].boosted)
                        timings.append(timing)
                        last = targets.count - 1
                        segments[key] = last
                    }
                }
                shards[shard(of: ticks[index].owner, among: shards.count)].deliveries.append(
                    Delivery(
                        link: ticks[index].link.rawValue, sequence: ticks[index].sequence, skipped: ticks[index].skipped, writer: writer,
                        owner: ticks[index].owner,
                        fields: UInt32(truncatingIfNeeded: base + last)
                    )
                )
            }
        }
    }

}

extension TickEngine {
    /// The shard (fan-out thread) that sends everything of `owner`'s connection: fixed by
    /// its slot, so that its lines leave from one thread, in order.
    static func shard(of owner: OwnerID, among count: Int) -> Int {
        count == 1 ? 0 : OwnerTable<SocketWriter>.slot(of: owner) % count
    }

    /// Sends one shard's ticks, then the `Presented` notifications of its connections:
    /// each connection's come after its ticks of the same vsync. Reports it, once, when the
    /// thread's io_uring failed and it moved to `send(2)`.
    static func send(
        _ batch: Batch, number: UInt64, through outbox: inout TickOutbox, sendPathFellBack: @Sendable (_ reason: String) -> Void
    ) {
        outbox.send(batch, number: number)
        sendPresented(batch.presented)
        if outbox.sender.takeRingFailure() != nil, let reason = outbox.sender.fallbackReason { sendPathFellBack(reason) }
    }
}

/// A fan-out thread other than the leader: sends the ticks of its shard's connections.
final class FanOutHelper: Sendable {
    private let jobs = Mutex<[(batch: TickEngine.Batch, number: UInt64)]>([])
    /// The latest batch handed over and the latest sent (``FanOutProgress``).
    private let progress: FanOutProgress.Helper
    private let waiter: EventWaiter
    private let stopping = Atomic<Bool>(false)
    /// This thread's send side; only its thread takes the lock (or the leader, when the
    /// thread could not be started).
    private let outbox: Mutex<TickOutbox>

    /// Tells the control loop that this thread's io_uring failed (``TickEngine/Events/sendPathFellBack``).
    private let sendPathFellBack: @Sendable (_ reason: String) -> Void

    init(
        sendPath: BatchSender.Path, gates: TickGates?, progress: FanOutProgress.Helper,
        sendPathFellBack: @escaping @Sendable (_ reason: String) -> Void = { _ in }
    ) throws(PosixError) {
        waiter = try EventWaiter()
        outbox = Mutex(TickOutbox(path: sendPath, gates: gates))
        self.progress = progress
        self.sendPathFellBack = sendPathFellBack
    }

    /// Set when the helper's thread could not be started: ``submit(_:number:)`` sends at once.
    private let sendsOnSubmitter = Atomic<Bool>(false)

    /// Queues one vsync's deliveries for this shard and wakes the thread (or, without a
    /// thread, sends them on the calling thread).
    /// - Parameter number: the batch's number (``DaemonState/beginBatch()``), above every earlier one's.
    func submit(_ batch: TickEngine.Batch, number: UInt64) {
        progress.submitted.store(number, ordering: .releasing)
        if sendsOnSubmitter.load(ordering: .relaxed) {
            outbox.withLock { TickEngine.send(batch, number: number, through: &$0, sendPathFellBack: sendPathFellBack) }
            progress.sent.store(number, ordering: .releasing)
            return
        }
        jobs.withLock { $0.append((batch, number)) }
        waiter.wake()
    }

    /// From now on ``submit(_:number:)`` sends on the thread that calls it (the leader):
    /// for a helper whose own thread could not be started.
    func sendOnSubmittingThread() {
        sendsOnSubmitter.store(true, ordering: .relaxed)
    }

    /// Sends queued deliveries until ``stop()``, and those queued before it: the leader
    /// stops its helpers after its last hand-over, so nothing it handed over is dropped
    /// (its ticks are counted as delivered, and closed connections' writers wait for them).
    func run() {
        while true {
            let stopRequested = stopping.load(ordering: .acquiring)
            sendQueued()
            if stopRequested { return }
            _ = waiter.wait(until: nil)
        }
    }

    private func sendQueued() {
        let batch = jobs.withLock { jobs in
            defer { jobs.removeAll(keepingCapacity: true) }
            return jobs
        }
        guard !batch.isEmpty else { return }
        outbox.withLock { outbox in
            for job in batch {
                TickEngine.send(job.batch, number: job.number, through: &outbox, sendPathFellBack: sendPathFellBack)
                progress.sent.store(job.number, ordering: .releasing)
            }
        }
    }

    /// Ends ``run()``.
    func stop() {
        stopping.store(true, ordering: .releasing)
        waiter.wake()
    }
}

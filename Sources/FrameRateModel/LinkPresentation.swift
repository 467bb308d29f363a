/// What a link's presented frames need: the targets of its latest ticks (to know when a
/// presented frame was expected), its previous shown frame, and its hitch counts.
///
/// A link keeps its 8 latest delivered ticks, and its first until it presents: a first
/// frame often takes longest (shaders compile, caches fill), and nothing holds a link's
/// ticks back before it first answers one, so the `Present` of tick 1's frame may come
/// many ticks later. They sit in one array allocated at the link's first tick (about
/// 1.2 KB): the first tick in slot 0, then a ring of the latest 8 in slots 1 to 8, each
/// tick overwriting the oldest in place (one record written per tick, as when only the
/// latest was kept).
struct LinkPresentation: Sendable {
    /// How many recent ticks a frame can still be presented for.
    static let recentLimit = 8

    /// The link's delivered ticks (sequence, expected presentation as its
    /// `targetPresentationTimestamp` since the display's origin, next frames, frame
    /// latency): in delivery order until it holds ``recentLimit`` + 1, then the first
    /// tick in slot 0 and a ring of the latest ``recentLimit`` in slots 1 to
    /// ``recentLimit``, whose newest is at ``newest``.
    private var ticks: [DeliveredTick] = []
    /// The slot of ``ticks`` holding the latest delivered tick.
    private var newest = 0
    /// When the link's previous frame was shown, since the display's origin.
    private(set) var lastShown: Duration?
    /// Whether the link has sent a `Present` (a link that never did shows `hitches: null`).
    private(set) var hasPresented = false
    /// The link's hitch counts, kept from its registration (so pauses before its first
    /// `Present` are known).
    var hitches: HitchCounter

    /// The presentation state of a link registered at `since` (since the display's origin).
    init(since: Duration, paused: Bool) {
        hitches = HitchCounter(since: since, paused: paused, now: since)
    }

    /// The link sent a `Present`: from now on its hitches are counted and shown, and its
    /// first tick, once older than the 8 latest, can no longer be presented.
    mutating func presenting() { hasPresented = true }

    /// Records a delivered tick whose frame is expected at `target` (its
    /// `targetPresentationTimestamp`, since the display's origin), with its next frames
    /// (`schedule`) and the link's frame latency then.
    mutating func delivered(sequence: UInt64, target: Duration, schedule: FrameSchedule? = nil, latency: Int = 1) {
        let tick = DeliveredTick(sequence: sequence, target: target, schedule: schedule, latency: latency)
        if ticks.count <= Self.recentLimit {
            if ticks.isEmpty { ticks.reserveCapacity(Self.recentLimit + 1) }  // the link's one allocation
            newest = ticks.count
            ticks.append(tick)
        } else {
            newest = newest == Self.recentLimit ? 1 : newest + 1
            ticks[newest] = tick
        }
    }

    /// The expected presentation of delivered tick `sequence`, if the link still keeps it.
    func target(of sequence: UInt64) -> Duration? {
        tick(sequence)?.target
    }

    /// Delivered tick `sequence`, if it is one of the 8 latest, or the link's first and the
    /// link has not presented yet (sequences start at 1).
    func tick(_ sequence: UInt64) -> DeliveredTick? {
        guard let slot = ticks.firstIndex(where: { $0.sequence == sequence }) else { return nil }
        // Slot 0 of a full array is the first tick, no longer among the latest 8.
        if slot == 0 && ticks.count > Self.recentLimit && hasPresented { return nil }
        return ticks[slot]
    }

    /// The oldest of the 8 latest delivered ticks (0 before the link's first tick).
    var oldestKnown: UInt64 {
        guard ticks.count > Self.recentLimit else { return ticks.first?.sequence ?? 0 }
        return ticks[newest == Self.recentLimit ? 1 : newest + 1].sequence
    }

    /// Records a frame shown at `time` (since the display's origin) with `hitch`.
    mutating func shown(at time: Duration, hitch: Duration) {
        lastShown = time
        hitches.shown(at: time, hitch: hitch)
    }
}


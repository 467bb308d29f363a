/// What a link's presented frames need: the targets of its latest ticks (to know when a
/// presented frame was expected), its previous shown frame, and its hitch counts.
///
/// A link keeps its 8 latest delivered ticks from its first on, whether or not it has
/// presented yet: a first frame often takes longest (shaders compile, caches fill), and
/// its `Present` may come after the next tick, or under load after several. They sit in
/// a ring allocated at the link's first tick (about 1 KB), each tick overwriting the
/// oldest in place: one record written per tick, as when only the latest was kept.
struct LinkPresentation: Sendable {
    /// How many recent ticks a frame can still be presented for.
    static let recentLimit = 8

    /// The latest ``recentLimit`` delivered ticks (sequence, expected presentation as its
    /// `targetPresentationTimestamp` since the display's origin, next frames, frame
    /// latency): in delivery order until full, then a ring whose newest entry is at ``newest``.
    private var recent: [DeliveredTick] = []
    /// The slot of ``recent`` holding the latest delivered tick.
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

    /// The link sent a `Present`: from now on its hitches are counted and shown.
    mutating func presenting() { hasPresented = true }

    /// Records a delivered tick whose frame is expected at `target` (its
    /// `targetPresentationTimestamp`, since the display's origin), with its next frames
    /// (`schedule`) and the link's frame latency then.
    mutating func delivered(sequence: UInt64, target: Duration, schedule: FrameSchedule? = nil, latency: Int = 1) {
        let tick = DeliveredTick(sequence: sequence, target: target, schedule: schedule, latency: latency)
        if recent.count < Self.recentLimit {
            if recent.isEmpty { recent.reserveCapacity(Self.recentLimit) }  // the link's one allocation
            newest = recent.count
            recent.append(tick)
        } else {
            newest = newest == Self.recentLimit - 1 ? 0 : newest + 1
            recent[newest] = tick
        }
    }

    /// The expected presentation of delivered tick `sequence`, if it is one of the recent ones.
    func target(of sequence: UInt64) -> Duration? {
        tick(sequence)?.target
    }

    /// Delivered tick `sequence`, if it is one of the recent ones (sequences start at 1).
    func tick(_ sequence: UInt64) -> DeliveredTick? {
        recent.first { $0.sequence == sequence }
    }

    /// The oldest sequence ``target(of:)`` still knows (0 before the link's first tick).
    var oldestKnown: UInt64 {
        guard recent.count == Self.recentLimit else { return recent.first?.sequence ?? 0 }
        return recent[newest == Self.recentLimit - 1 ? 0 : newest + 1].sequence
    }

    /// Records a frame shown at `time` (since the display's origin) with `hitch`.
    mutating func shown(at time: Duration, hitch: Duration) {
        lastShown = time
        hitches.shown(at: time, hitch: hitch)
    }
}


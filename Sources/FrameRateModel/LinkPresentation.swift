/// What a link's presented frames need: the targets of its latest ticks (to know when a
/// presented frame was expected), its previous shown frame, and its hitch counts.
///
/// Nothing is allocated for a link until it presents: a link that never does keeps only
/// its latest tick's target.
struct LinkPresentation: Sendable {
    /// How many recent ticks a frame can still be presented for, once the link presents.
    static let recentLimit = 8

    /// The latest delivered tick's sequence, expected presentation (its `targetPresentationTimestamp`,
    /// since the display's origin), next frames and frame latency.
    private var latest = DeliveredTick(sequence: 0, target: .zero, schedule: nil, latency: 1)
    /// The ticks before ``latest``, oldest first, kept once the link presents.
    private var recent: [DeliveredTick] = []
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

    /// The link sent a `Present`: from now on its recent ticks are kept.
    mutating func presenting() { hasPresented = true }

    /// Records a delivered tick whose frame is expected at `target` (its
    /// `targetPresentationTimestamp`, since the display's origin), with its next frames
    /// (`schedule`) and the link's frame latency then.
    mutating func delivered(sequence: UInt64, target: Duration, schedule: FrameSchedule? = nil, latency: Int = 1) {
        if hasPresented {
            if recent.count == Self.recentLimit - 1 { recent.removeFirst() }
            recent.append(latest)
        }
        latest = DeliveredTick(sequence: sequence, target: target, schedule: schedule, latency: latency)
    }

    /// The expected presentation of delivered tick `sequence`, if it is one of the recent ones.
    func target(of sequence: UInt64) -> Duration? {
        tick(sequence)?.target
    }

    /// Delivered tick `sequence`, if it is one of the recent ones.
    func tick(_ sequence: UInt64) -> DeliveredTick? {
        if latest.sequence == sequence && sequence > 0 { return latest }
        return recent.last { $0.sequence == sequence }
    }

    /// The oldest sequence ``target(of:)`` still knows.
    var oldestKnown: UInt64 { recent.first?.sequence ?? latest.sequence }

    /// Records a frame shown at `time` (since the display's origin) with `hitch`.
    mutating func shown(at time: Duration, hitch: Duration) {
        lastShown = time
        hitches.shown(at: time, hitch: hitch)
    }
}


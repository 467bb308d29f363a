/// What a link's presented frames need: the targets of its latest ticks (to know when a
/// presented frame was expected), its previous shown frame, and its hitch counts.
///
/// Nothing is allocated for a link until it presents: a link that never does keeps only
/// its latest tick's target.
struct LinkPresentation: Sendable {
    /// How many recent ticks a frame can still be presented for, once the link presents.
    static let recentLimit = 8

    /// The latest delivered tick's sequence and target (since the display's origin).
    private var latest: (sequence: UInt64, target: Duration) = (0, .zero)
    /// The ticks before ``latest``, oldest first, kept once the link presents.
    private var recent: [(sequence: UInt64, target: Duration)] = []
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

    /// Records a delivered tick.
    mutating func delivered(sequence: UInt64, target: Duration) {
        if hasPresented {
            if recent.count == Self.recentLimit - 1 { recent.removeFirst() }
            recent.append(latest)
        }
        latest = (sequence, target)
    }

    /// The target of delivered tick `sequence`, if it is one of the recent ones.
    func target(of sequence: UInt64) -> Duration? {
        if latest.sequence == sequence && sequence > 0 { return latest.target }
        return recent.last { $0.sequence == sequence }?.target
    }

    /// The oldest sequence ``target(of:)`` still knows.
    var oldestKnown: UInt64 { recent.first?.sequence ?? latest.sequence }

    /// Records a frame shown at `time` (since the display's origin) with `hitch`.
    mutating func shown(at time: Duration, hitch: Duration) {
        lastShown = time
        hitches.shown(at: time, hitch: hitch)
    }
}

/// What happened at one vsync of one display: the driver's instructions.
public struct VsyncReport<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The display.
    public let display: DisplayID
    /// The vsync's instant.
    public let vsync: Instant
    /// The vsync's index since the display started.
    public let index: UInt64
    /// Vsyncs skipped because the driver woke up late.
    public let missedVsyncs: UInt64
    /// The refresh-rate change that took effect at this vsync, if any; when two did (see
    /// ``passedOverChange``), the later one, in force from this vsync on.
    public let rateChange: RefreshRateChange?
    /// When ``rateChange`` took effect, when that was at an earlier vsync than this one: a
    /// decided change whose vsync a late wake-up passed over is applied at its own vsync
    /// (`nil`: at this one).
    public var rateChangeVsync: Instant? = nil
    /// A change applied at an earlier vsync that a late wake-up passed over, when another
    /// (``rateChange``) then took effect at this vsync: for example, with a zero decrease
    /// dwell, a boost that ended between the two re-arbitrates down at once. `nil` otherwise.
    public var passedOverChange: (change: RefreshRateChange, vsync: Instant)? = nil

    /// Every refresh-rate change of this report in the order they took effect, each with
    /// the vsync it took effect at: what watchers and traces must be told, in that order.
    public var rateChanges: [(change: RefreshRateChange, vsync: Instant)] {
        guard let rateChange else { return [] }
        let last = (rateChange, rateChangeVsync ?? vsync)
        guard let passedOverChange else { return [last] }
        return [passedOverChange, last]
    }
    /// The panel-rate change that took effect at this vsync, if any: the same as
    /// ``rateChange`` unless a content-velocity report lowers the panel below the grid.
    public var panelChange: RefreshRateChange? = nil
    /// Ticks to deliver, in link registration order.
    public let ticks: [Tick<Instant>]
    /// Frames shown at this vsync (`Present`ed earlier), by link id.
    public let presentations: [Presentation<Instant>]
    /// When to process the next vsync.
    public let nextVsync: Instant
    /// Links whose wait for an unanswered tick's frame reached 1 s at this vsync (each
    /// wait once), in link registration order.
    public var heldBack: [HeldBackLink] = []
    /// Links that tick again at this vsync after a wait ``heldBack`` reported, in link
    /// registration order.
    public var resumed: [ResumedLink] = []
}

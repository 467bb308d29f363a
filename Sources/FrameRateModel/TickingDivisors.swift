/// The cadence divisor (vsyncs from one tick to the next) of every link of a display that
/// ticks, and how many links tick at each: all a display needs to know when a link can
/// next tick. A link with divisor `d` is due only at the vsync indices that are multiples
/// of `d` (``LinkPacer``), so the earliest such index is found among the distinct divisors
/// (one per distinct cadence, usually a handful) instead of the links. A pacer may still
/// let a due vsync pass (one less than half a period after its previous tick's target,
/// after its cadence shortened): the answer is then a vsync at which nothing happens, a
/// wake-up too many and never a tick missed, as with the walk over the links it replaces.
struct TickingDivisors: Sendable, Equatable {
    /// Each ticking link's divisor.
    private var divisorOfLink: [LinkID: Int] = [:]
    /// How many links tick at each divisor (no zero counts).
    private(set) var counts: [Int: Int] = [:]

    init() {}

    /// Counts `link` at `divisor` (at least 1), or not at all when `nil` (paused or gone).
    mutating func set(_ link: LinkID, to divisor: Int?) {
        precondition(divisor.map { $0 >= 1 } ?? true, "a cadence divisor is at least 1")
        let previous = divisor.map { divisorOfLink.updateValue($0, forKey: link) } ?? divisorOfLink.removeValue(forKey: link)
        guard previous != divisor else { return }
        if let previous {
            let remaining = (counts[previous] ?? 1) - 1
            counts[previous] = remaining > 0 ? remaining : nil
        }
        if let divisor { counts[divisor, default: 0] += 1 }
    }

    /// The first vsync index at or after `next` at which some counted link ticks, or `nil`
    /// when none is counted. O(distinct divisors).
    func firstTick(atOrAfter next: UInt64) -> UInt64? {
        var earliest: UInt64?
        for divisor in counts.keys {
            // A divisor is at least 1 (``CallbackCadence`` clamps it): the conversion is exact.
            let step = UInt64(divisor)
            let remainder = next % step
            if remainder == 0 { return next }
            // A multiple past UInt64's range is never due (only a handover snapshot could
            // bring the grid's index that far).
            let (due, overflow) = next.addingReportingOverflow(step - remainder)
            if overflow { continue }
            earliest = Swift.min(earliest ?? due, due)
        }
        return earliest
    }
}

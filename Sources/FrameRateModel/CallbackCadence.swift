/// How one range fares at one refresh rate: the callback rate it would get
/// (`refresh / n` for a whole `n`) and how well that serves it.
///
/// This is the single place that decides a link's callback rate, used both to
/// score candidates during arbitration and to pace a link's ticks.
public struct CallbackCadence: Hashable, Sendable {
    /// The divisor `n >= 1`: the link ticks on every n-th vsync.
    public let divisor: Int
    /// `refresh / divisor`, in Hz.
    public let callbackRate: Double
    /// Whether the callback rate lies inside the link's range.
    public let isInsideRange: Bool
    /// Whether the refresh rate serves the link exactly: its preferred rate is
    /// `refresh / n` for a whole `n`, or, without a preferred rate, some
    /// `refresh / n` lies inside its range.
    public let isExact: Bool
    /// The relative distance between the callback rate and what the link asked
    /// for: `|callback - preferred| / preferred`; for a link without a preferred
    /// rate, `0` inside its range and the relative distance to its minimum outside it.
    public let distance: Double

    /// The cadence of `range` at `refresh` Hz.
    ///
    /// Rule: the `refresh / n` closest to the preferred rate, preferring one inside
    /// the range (ties to the higher rate); without a preferred rate, the highest
    /// `refresh / n` inside the range; when no `refresh / n` is inside, the highest
    /// `refresh / n` at or below the range's maximum. A link therefore never ticks
    /// faster than its (clamped) maximum, not even while the display runs at a rate
    /// arbitration no longer wants (a decrease dwell): its divisor brings the rate in
    /// force down to what it may have.
    public init(range: FrameRateRange, refresh: Double) {
        if let inside = FrameRateMath.divisors(of: refresh, inside: range) {
            let n: Int
            if range.hasPreferredRate {
                n = Self.closestDivisor(of: refresh, to: range.preferred, within: inside)
            } else {
                n = inside.lowerBound
            }
            let rate = refresh / Double(n)
            self.divisor = n
            self.callbackRate = rate
            self.isInsideRange = true
            if range.hasPreferredRate {
                self.isExact = FrameRateMath.equal(rate, range.preferred)
                self.distance = self.isExact ? 0 : abs(rate - range.preferred) / range.preferred
            } else {
                self.isExact = true
                self.distance = 0
            }
        } else {
            // No `refresh / n` is inside, so the highest one at or below the maximum lies
            // below the minimum: the smallest `n` with `refresh / n <= maximum`, with the
            // same tolerance as ``FrameRateMath/divisors(of:inside:)``.
            let ideal = refresh / range.maximum * (1 - FrameRateMath.tolerance)
            // `wholeNumber`: `min` passes a NaN through, and `Int(_:)` of it traps.
            let n = ideal <= 1 ? 1 : FrameRateMath.wholeNumber(ideal.rounded(.up), clampedTo: 1...(Int.max / 2))
            let rate = refresh / Double(n)
            self.divisor = n
            self.callbackRate = rate
            self.isInsideRange = false
            self.isExact = false
            if range.hasPreferredRate {
                self.distance = abs(rate - range.preferred) / range.preferred
            } else {
                self.distance = abs(range.minimum - rate) / range.minimum
            }
        }
    }

    /// The `n` in `allowed` whose `refresh / n` is closest to `target`
    /// (ties to the smaller `n`, i.e. the higher rate).
    static func closestDivisor(of refresh: Double, to target: Double, within allowed: ClosedRange<Int>) -> Int {
        // Only the two whole numbers around the ideal divisor can be closest; compared
        // in place (this runs for every group and candidate rate of an arbitration).
        let ideal = refresh / target
        // Clamped to Int.max / 2 so `below + 1` cannot overflow; with validated rates the
        // ideal divisor is below 10^5 anyway.
        let below = FrameRateMath.wholeNumber(ideal.rounded(.down), clampedTo: 0...(Int.max / 2))
        let first = Swift.min(Swift.max(below, allowed.lowerBound, 1), allowed.upperBound)
        let second = Swift.min(Swift.max(below + 1, allowed.lowerBound, 1), allowed.upperBound)
        let firstDistance = abs(refresh / Double(first) - target)
        let secondDistance = abs(refresh / Double(second) - target)
        if FrameRateMath.equal(secondDistance, firstDistance) { return Swift.min(first, second) }
        return secondDistance < firstDistance ? second : first
    }
}

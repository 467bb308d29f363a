/// Arithmetic on rates in Hz shared by arbitration and tick scheduling:
/// tolerant comparisons and the `refresh / n` divisor search.
///
/// Rates are `Double`s because profiles may hold fractional rates (23.976 Hz);
/// every comparison goes through a relative tolerance so `120 / 5 == 24` holds.
public enum FrameRateMath {
    /// Relative tolerance for comparing rates (one part in a million).
    public static let tolerance: Double = 1e-6

    /// `a == b` within ``tolerance``, relative to the larger magnitude.
    public static func equal(_ a: Double, _ b: Double) -> Bool {
        abs(a - b) <= tolerance * Swift.max(abs(a), abs(b), 1)
    }

    /// `a <= b` within ``tolerance``.
    public static func lessOrEqual(_ a: Double, _ b: Double) -> Bool {
        a <= b || equal(a, b)
    }

    /// The divisors `n >= 1` for which `refresh / n` lies inside `range`,
    /// as a closed interval of whole numbers, or `nil` when none does.
    ///
    /// `refresh / n` falls as `n` grows, so the interval runs from the
    /// smallest `n` with `refresh / n <= maximum` to the largest with
    /// `refresh / n >= minimum`.
    public static func divisors(of refresh: Double, inside range: FrameRateRange) -> ClosedRange<Int>? {
        let low = Swift.max(1, Int((refresh / range.maximum * (1 - tolerance)).rounded(.up)))
        let high = Int((refresh / range.minimum * (1 + tolerance)).rounded(.down))
        guard low <= high else { return nil }
        return low...high
    }

    /// The whole divisor `n >= 1` for which `refresh / n` equals `rate`, if any.
    public static func exactDivisor(of refresh: Double, yielding rate: Double) -> Int? {
        guard rate > 0 else { return nil }
        let n = Swift.max(1, Int((refresh / rate).rounded()))
        return equal(refresh / Double(n), rate) ? n : nil
    }

    /// Formats a rate in Hz: whole numbers without a fraction, others with up to three decimals.
    public static func format(_ rate: Double) -> String {
        if rate == rate.rounded(), abs(rate) < 1e15 { return String(Int(rate)) }
        let scaled = (rate * 1000).rounded() / 1000
        return String(scaled)
    }
}

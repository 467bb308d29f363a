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
    /// `refresh / n >= minimum`. With validated rates (``FrameRateRange/acceptedRates``)
    /// both quotients lie in `[10^-5, 10^5]`; the conversions are clamped all the same.
    public static func divisors(of refresh: Double, inside range: FrameRateRange) -> ClosedRange<Int>? {
        let low = wholeNumber((refresh / range.maximum * (1 - tolerance)).rounded(.up), clampedTo: 1...Int.max)
        let high = wholeNumber((refresh / range.minimum * (1 + tolerance)).rounded(.down), clampedTo: 0...Int.max)
        guard low <= high else { return nil }
        return low...high
    }

    /// The whole divisor `n >= 1` for which `refresh / n` equals `rate`, if any.
    public static func exactDivisor(of refresh: Double, yielding rate: Double) -> Int? {
        guard rate > 0 else { return nil }
        let n = wholeNumber((refresh / rate).rounded(), clampedTo: 1...Int.max)
        return equal(refresh / Double(n), rate) ? n : nil
    }

    /// `duration` in whole nanoseconds, to the nearest (halves away from zero), saturating
    /// at `Int64.min` and `Int64.max` (about ±292 years) instead of trapping: the one
    /// conversion of a `Duration` to nanoseconds (the wire's times, the pacer's comparisons).
    public static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        // |attoseconds| < 10^18, so the rounded quotient is below 10^9 in magnitude.
        let rounded = (attoseconds + (attoseconds < 0 ? -500_000_000 : 500_000_000)) / 1_000_000_000
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = scaled.addingReportingOverflow(rounded)
        guard !overflowSum else { return scaled < 0 ? .min : .max }
        return sum
    }

    /// `duration * count`, exact to the attosecond, trapping on overflow as `*` does: in
    /// concrete 128-bit arithmetic, where the standard library's `Duration * some
    /// BinaryInteger` takes a generic conversion path (about 400 instructions a call; the
    /// tick plane multiplies periods several times per vsync, placing vsyncs on the grid).
    @inlinable
    public static func times(_ duration: Duration, _ count: Int) -> Duration {
        Duration(attoseconds: duration.attoseconds * Int128(count))
    }

    /// `value` rounded toward zero and clamped into `bounds`; NaN gives `bounds.lowerBound`.
    ///
    /// The model's one conversion from a floating-point quotient to an integer: it never traps,
    /// whatever the value (`Int(_: Double)` traps on NaN, infinities and out-of-range values).
    public static func wholeNumber<Integer: FixedWidthInteger>(_ value: Double, clampedTo bounds: ClosedRange<Integer>) -> Integer {
        guard !value.isNaN else { return bounds.lowerBound }
        // `Double(bound)` may round (Int.max becomes 2^63), so compare with `<=`/`>=`. Past
        // these, `value` lies strictly between two doubles that are each within the type's
        // range or one past it (2^63 for Int.max, 2^64 for UInt64.max), so its truncation
        // fits the type and `Integer(_:)` cannot trap; the clamp below catches a truncation
        // that lands past a bound that rounded up. This runs per group and candidate in every
        // arbitration, where the generic `Integer(exactly:)` / `Integer(_:)` (`_convert(from:)`)
        // cost 10 % of it; the concrete 64-bit conversions are one instruction each.
        if value <= Double(bounds.lowerBound) { return bounds.lowerBound }
        if value >= Double(bounds.upperBound) { return bounds.upperBound }
        let whole: Integer
        if Integer.bitWidth <= 64 {
            // In (-2^63, 2^64) here, as shown above; the same number in `Integer` after it.
            whole = value < 0x1p63 ? Integer(truncatingIfNeeded: Int64(value)) : Integer(truncatingIfNeeded: UInt64(value))
        } else {
            whole = Integer(value)
        }
        return Swift.min(Swift.max(whole, bounds.lowerBound), bounds.upperBound)
    }

    /// Formats a rate in Hz for display: whole numbers without a fraction, others with up to
    /// three decimals. For rates that passed validation; anything else is written exactly
    /// (``exactText(_:)``) rather than rounded into something it is not.
    public static func format(_ rate: Double) -> String {
        if let whole = Int(exactly: rate) { return String(whole) }
        guard rate.isFinite, abs(rate) >= 0.001, abs(rate) < 1e15 else { return exactText(rate) }
        let scaled = (rate * 1000).rounded() / 1000
        return String(scaled)
    }

    /// A value as it was given, in its shortest exact form: `1000.0001`, `1e-300`,
    /// `1.7e+308`, `60` (no `.0` for whole numbers). For error messages, which must quote a
    /// rejected value, not a rounding of it.
    public static func exactText(_ value: Double) -> String {
        if let whole = Int(exactly: value) { return String(whole) }
        return value.description
    }
}

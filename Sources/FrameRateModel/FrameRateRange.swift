/// A display link's frame-rate hint: the `CAFrameRateRange` analog.
///
/// All three values are in hertz (frames per second). `preferred == 0` means
/// "no preference": the link only asks for *some* callback rate inside
/// `minimum...maximum`, so it never pulls the display above its `minimum`
/// (seed 002's monitoring link uses `minimum: 10, maximum: <current>, preferred: 0`).
///
/// A range can only be built through ``init(minimum:maximum:preferred:)``, which
/// rejects anything invalid with a ``FrameRateRangeError`` naming the broken rule.
/// Nothing is ever clamped silently.
public struct FrameRateRange: Hashable, Sendable, CustomStringConvertible {
    /// The lowest rate a range accepts, in Hz: 0.01 Hz, one callback every 100 s.
    /// Validation bound for `minimum` (and so for every rate of a range). With it, every
    /// `refresh / rate` quotient of the model stays below 10^5.
    public static let lowestAcceptedRate: Double = 0.01
    /// The highest rate a range accepts, in Hz: 1000 Hz. Validation bound for `maximum`.
    public static let highestAcceptedRate: Double = 1000
    /// Every rate a range (or a display profile) may hold, in Hz.
    public static let acceptedRates: ClosedRange<Double> = lowestAcceptedRate...highestAcceptedRate

    /// The lowest callback rate the link accepts, in Hz (`>= 0.01`).
    public let minimum: Double
    /// The highest callback rate the link accepts, in Hz (`>= minimum`, `<= 1000`).
    public let maximum: Double
    /// The rate the link would like, in Hz, or `0` for no preference.
    public let preferred: Double

    /// Validates and builds a range.
    ///
    /// Rules, checked in this order: every value is finite; `minimum >= 0.01`
    /// (``lowestAcceptedRate``); `minimum <= maximum`; `maximum <= 1000`
    /// (``highestAcceptedRate``); `preferred` is `0` or inside `minimum...maximum`.
    /// - Throws: ``FrameRateRangeError`` naming the field and the rule it broke.
    public init(minimum: Double, maximum: Double, preferred: Double = 0) throws(FrameRateRangeError) {
        func broken(_ field: FrameRateRangeError.Field, _ rule: FrameRateRangeError.Rule) -> FrameRateRangeError {
            FrameRateRangeError(field: field, rule: rule, minimum: minimum, maximum: maximum, preferred: preferred)
        }
        for (field, value) in [(FrameRateRangeError.Field.minimum, minimum), (.maximum, maximum), (.preferred, preferred)]
        where !value.isFinite {
            throw broken(field, .notFinite)
        }
        guard minimum >= Self.lowestAcceptedRate else { throw broken(.minimum, .belowLowestRate) }
        guard minimum <= maximum else { throw broken(.maximum, .belowMinimum) }
        guard maximum <= Self.highestAcceptedRate else { throw broken(.maximum, .aboveHighestRate) }
        guard preferred == 0 || (minimum...maximum).contains(preferred) else { throw broken(.preferred, .outsideRange) }
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred
    }

    /// A range already known to satisfy every rule; used by clamping, which
    /// only ever lowers bounds and so preserves validity.
    init(uncheckedMinimum minimum: Double, maximum: Double, preferred: Double) {
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred
    }

    /// Whether the link states a preferred rate (`preferred > 0`).
    public var hasPreferredRate: Bool { preferred > 0 }

    /// Whether `rate` (Hz) lies inside `minimum...maximum`, with a relative
    /// tolerance of ``FrameRateMath/tolerance`` so `120 / 5` counts as 24.
    public func contains(_ rate: Double) -> Bool {
        FrameRateMath.lessOrEqual(minimum, rate) && FrameRateMath.lessOrEqual(rate, maximum)
    }

    /// The range with every bound lowered to at most `limit` Hz.
    ///
    /// This is how a cap or a missing entitlement acts on a link: a link whose
    /// whole range lies above the limit is pinned to the limit.
    public func clamped(toAtMost limit: Double) -> FrameRateRange {
        FrameRateRange(
            uncheckedMinimum: Swift.min(minimum, limit),
            maximum: Swift.min(maximum, limit),
            preferred: preferred == 0 ? 0 : Swift.min(preferred, limit)
        )
    }

    /// `(minimum, maximum, preferred)` in Hz, as the docs write ranges.
    public var description: String {
        "(\(Self.format(minimum)), \(Self.format(maximum)), \(Self.format(preferred)))"
    }

    /// Formats a rate in Hz without a trailing `.0` for whole numbers.
    static func format(_ rate: Double) -> String { FrameRateMath.format(rate) }
}

/// Why a ``FrameRateRange`` was rejected: the offending field, the rule it broke, and the
/// values as given, so the message can quote them.
///
/// ``message`` quotes the values as `Double`s (shortest exact form: `1000.0001`, `1e-300`);
/// ``message(quoting:)`` lets a caller that still has the values' original text (the JSON-RPC
/// layer) quote them exactly as they were sent.
public struct FrameRateRangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A field of a range.
    public enum Field: String, Hashable, Sendable {
        case minimum, maximum, preferred
    }

    /// A validation rule of ``FrameRateRange/init(minimum:maximum:preferred:)``.
    public enum Rule: Hashable, Sendable {
        /// The field is NaN or infinite.
        case notFinite
        /// `minimum` is below ``FrameRateRange/lowestAcceptedRate``.
        case belowLowestRate
        /// `maximum` is below `minimum`.
        case belowMinimum
        /// `maximum` is above ``FrameRateRange/highestAcceptedRate``.
        case aboveHighestRate
        /// `preferred` is neither 0 nor inside `minimum...maximum`.
        case outsideRange
    }

    /// The field that broke a rule.
    public let field: Field
    /// The rule it broke.
    public let rule: Rule
    /// The values given, in Hz.
    public let minimum, maximum, preferred: Double

    /// Builds an error for `field` breaking `rule`, with the values given.
    public init(field: Field, rule: Rule, minimum: Double, maximum: Double, preferred: Double) {
        self.field = field
        self.rule = rule
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred
    }

    /// The sentence stating the broken rule, the bound and the offending value, with each
    /// value written by `quote` (given the field whose value it is).
    public func message(quoting quote: (Field) -> String) -> String {
        let name = field.rawValue
        let bound = FrameRateMath.format
        switch rule {
        case .notFinite:
            return "\(name) must be a finite number of Hz, got \(quote(field))"
        case .belowLowestRate:
            return "minimum must be at least \(bound(FrameRateRange.lowestAcceptedRate)) Hz (the lowest accepted rate), got \(quote(.minimum))"
        case .belowMinimum:
            return "maximum (\(quote(.maximum)) Hz) must be at least minimum (\(quote(.minimum)) Hz)"
        case .aboveHighestRate:
            return "maximum must be at most \(bound(FrameRateRange.highestAcceptedRate)) Hz (the highest accepted rate), got \(quote(.maximum))"
        case .outsideRange:
            return "preferred must be 0 (no preference) or within minimum...maximum "
                + "(\(quote(.minimum))...\(quote(.maximum)) Hz), got \(quote(.preferred))"
        }
    }

    /// The message, quoting each value in its shortest exact form.
    public var message: String {
        message { field in
            switch field {
            case .minimum: FrameRateMath.exactText(minimum)
            case .maximum: FrameRateMath.exactText(maximum)
            case .preferred: FrameRateMath.exactText(preferred)
            }
        }
    }

    /// The message.
    public var description: String { message }
}

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
    /// The highest rate the range accepts, in Hz. Validation bound for `maximum`.
    public static let highestAcceptedRate: Double = 1000

    /// The lowest callback rate the link accepts, in Hz (`> 0`).
    public let minimum: Double
    /// The highest callback rate the link accepts, in Hz (`>= minimum`, `<= 1000`).
    public let maximum: Double
    /// The rate the link would like, in Hz, or `0` for no preference.
    public let preferred: Double

    /// Validates and builds a range.
    ///
    /// Rules, checked in this order: every value is finite; `0 < minimum`;
    /// `minimum <= maximum`; `maximum <= 1000`; `preferred` is `0` or inside
    /// `minimum...maximum`.
    /// - Throws: ``FrameRateRangeError`` naming the field and the rule it broke.
    public init(minimum: Double, maximum: Double, preferred: Double = 0) throws(FrameRateRangeError) {
        for (field, value) in [("minimum", minimum), ("maximum", maximum), ("preferred", preferred)] where !value.isFinite {
            throw FrameRateRangeError(field: field, message: "\(field) must be a finite number of Hz, got \(value)")
        }
        guard minimum > 0 else {
            throw FrameRateRangeError(field: "minimum", message: "minimum must be greater than 0 Hz, got \(Self.format(minimum))")
        }
        guard minimum <= maximum else {
            throw FrameRateRangeError(
                field: "maximum",
                message: "maximum (\(Self.format(maximum)) Hz) must be at least minimum (\(Self.format(minimum)) Hz)"
            )
        }
        guard maximum <= Self.highestAcceptedRate else {
            throw FrameRateRangeError(
                field: "maximum",
                message: "maximum must be at most \(Self.format(Self.highestAcceptedRate)) Hz, got \(Self.format(maximum))"
            )
        }
        guard preferred == 0 || (minimum...maximum).contains(preferred) else {
            throw FrameRateRangeError(
                field: "preferred",
                message: "preferred must be 0 (no preference) or within minimum...maximum "
                    + "(\(Self.format(minimum))...\(Self.format(maximum)) Hz), got \(Self.format(preferred))"
            )
        }
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

/// Why a ``FrameRateRange`` was rejected: the offending field and a sentence
/// that states the rule it broke, ready to show to the user.
public struct FrameRateRangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field that broke a rule: `minimum`, `maximum` or `preferred`.
    public let field: String
    /// A human-readable statement of the broken rule and the offending value.
    public let message: String

    /// Builds an error for `field` with `message`.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

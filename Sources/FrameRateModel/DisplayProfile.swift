import UntrustedText

/// A display's named set of supported refresh rates, in Hz, highest first.
///
/// Whether rates above ``entitlementFreeLimit`` (60 Hz) need the
/// high-frame-rate entitlement is part of the profile: the
/// `CADisableMinimumFrameDurationOnPhone` analog, required on phones and not on pads.
public struct DisplayProfile: Hashable, Sendable, CustomStringConvertible {
    /// The highest rate, in Hz, a link may use without the high-frame-rate entitlement
    /// on a profile that requires it.
    public static let entitlementFreeLimit: Double = 60

    /// The profile's name, e.g. `promotion-phone`.
    public let name: String
    /// Supported refresh rates in Hz, strictly decreasing, all `> 0`.
    public let supportedRates: [Double]
    /// Whether rates above 60 Hz are unlocked only by links with the entitlement.
    public let requiresEntitlementAbove60Hz: Bool
    /// The panel rates content velocity votes for (``ContentVelocityTable``), or `nil`:
    /// then `contentVelocity` reports are accepted and ignored (a fixed-rate panel, a
    /// custom profile).
    public private(set) var velocityTable: ContentVelocityTable? = nil

    /// Builds a custom profile.
    ///
    /// The rates may come in any order and are sorted highest first.
    /// - Throws: ``DisplayProfileError`` when the list is empty, holds a rate outside
    ///   ``FrameRateRange/acceptedRates`` (0.01...1000 Hz, so no NaN or infinity), or a
    ///   duplicate; or when `requiresEntitlementAbove60Hz` is set and no rate is at or below
    ///   60 Hz (links without the entitlement could then never be honoured).
    public init(name: String, supportedRates: [Double], requiresEntitlementAbove60Hz: Bool = false) throws(DisplayProfileError) {
        let shownName = EchoedValue.text(name, limit: 64)
        guard !supportedRates.isEmpty else {
            throw DisplayProfileError("profile '\(shownName)' needs at least one supported rate")
        }
        let accepted = FrameRateRange.acceptedRates
        for rate in supportedRates where !accepted.contains(rate) {
            throw DisplayProfileError(
                "profile '\(shownName)': every rate must be a number of Hz in "
                    + "\(FrameRateMath.format(accepted.lowerBound))...\(FrameRateMath.format(accepted.upperBound)), "
                    + "got \(FrameRateMath.exactText(rate))"
            )
        }
        let sorted = supportedRates.sorted(by: >)
        for (higher, lower) in zip(sorted, sorted.dropFirst()) where FrameRateMath.equal(higher, lower) {
            throw DisplayProfileError("profile '\(shownName)' lists \(FrameRateMath.format(lower)) Hz twice")
        }
        if requiresEntitlementAbove60Hz && !sorted.contains(where: { FrameRateMath.lessOrEqual($0, Self.entitlementFreeLimit) }) {
            throw DisplayProfileError(
                "profile '\(name)' needs the entitlement above 60 Hz but has no rate at or below 60 Hz: "
                    + "add one, or drop the :entitlement suffix"
            )
        }
        self.name = name
        self.supportedRates = sorted
        self.requiresEntitlementAbove60Hz = requiresEntitlementAbove60Hz
    }

    /// The highest supported rate, in Hz.
    public var highestRate: Double { supportedRates[0] }
    /// The lowest supported rate, in Hz: where an idle display settles.
    public var lowestRate: Double { supportedRates[supportedRates.count - 1] }

    /// The rate a display starts at before any arbitration, in Hz:
    /// 60 Hz when supported (what a panel shows at boot), else the highest rate.
    public var initialRate: Double {
        supportedRates.first { FrameRateMath.equal($0, 60) } ?? highestRate
    }

    /// The same profile with `table` as its content-velocity table.
    func with(velocityTable table: ContentVelocityTable) -> DisplayProfile {
        var profile = self
        profile.velocityTable = table
        return profile
    }

    /// `name: r1 r2 ... Hz`.
    public var description: String {
        "\(name): " + supportedRates.map(FrameRateMath.format).joined(separator: " ") + " Hz"
    }
}

extension DisplayProfile {
    /// ProMotion phone panel: 120 80 60 48 40 30 24 20 16 15 12 10 Hz;
    /// rates above 60 Hz need the entitlement. The default profile.
    public static let promotionPhone = try! DisplayProfile(
        name: "promotion-phone",
        supportedRates: [120, 80, 60, 48, 40, 30, 24, 20, 16, 15, 12, 10],
        requiresEntitlementAbove60Hz: true
    ).with(velocityTable: .phone)

    /// ProMotion pad panel: 120 60 40 30 24 Hz; no entitlement needed.
    public static let promotionPad = try! DisplayProfile(
        name: "promotion-pad",
        supportedRates: [120, 60, 40, 30, 24]
    ).with(velocityTable: .pad)

    /// A fixed 60 Hz panel.
    public static let fixed60 = try! DisplayProfile(name: "fixed-60", supportedRates: [60])

    /// The built-in profiles, default first.
    public static let builtIn: [DisplayProfile] = [.promotionPhone, .promotionPad, .fixed60]

    /// Resolves a profile specification: a built-in name (`promotion-phone`,
    /// `promotion-pad`, `fixed-60`), or `custom:R1,R2,...` with rates in Hz,
    /// optionally suffixed `:entitlement` when rates above 60 Hz need it
    /// (e.g. `custom:144,120,72,48:entitlement`). Each rate is a plain decimal number
    /// (`59.94`; no sign, exponent, hexadecimal, `nan` or `inf`) in 0.01...1000 Hz.
    /// - Throws: ``DisplayProfileError`` naming the built-in profiles and the custom syntax.
    public static func named(_ specification: String) throws(DisplayProfileError) -> DisplayProfile {
        if let builtIn = builtIn.first(where: { $0.name == specification }) { return builtIn }
        let shown = EchoedValue.text(specification, limit: 64)
        let parts = specification.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "custom" else {
            throw DisplayProfileError(
                "unknown display profile '\(shown)'; use one of "
                    + builtIn.map(\.name).joined(separator: ", ")
                    + ", or custom:RATE,RATE,... (Hz) with an optional :entitlement suffix"
            )
        }
        guard parts.count == 2 || (parts.count == 3 && parts[2] == "entitlement") else {
            throw DisplayProfileError("custom profile '\(shown)': the only suffix allowed is ':entitlement'")
        }
        var rates: [Double] = []
        for field in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
            let text = field.trimmingSpaces()
            guard text.isPlainDecimal, let rate = Double(text) else {
                throw DisplayProfileError(
                    "custom profile '\(shown)': '\(EchoedValue.text(String(field)))' is not a rate in Hz (a decimal number such as 59.94)"
                )
            }
            rates.append(rate)
        }
        return try DisplayProfile(name: specification, supportedRates: rates, requiresEntitlementAbove60Hz: parts.count == 3)
    }
}

/// Why a display profile could not be built or found; the message says what to use instead.
public struct DisplayProfileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A human-readable explanation.
    public let message: String
    init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

extension Substring {
    /// Whether the text is `digits` or `digits.digits`: the only rate syntax a custom
    /// profile takes (`Double(_:)` alone would also take `nan`, `inf`, `0x3C` and `1e-300`).
    fileprivate var isPlainDecimal: Bool {
        let pieces = split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        return pieces.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }
    }

    fileprivate func trimmingSpaces() -> Substring {
        var slice = self
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return slice
    }
}

import FrameRateModel
import FrameRateTesting
import Testing

@Suite("FrameRateRange validation")
struct FrameRateRangeTests {
    struct Invalid: Sendable, CustomTestStringConvertible {
        var minimum, maximum, preferred: Double
        var field: String
        var says: String
        var testDescription: String { "(\(minimum), \(maximum), \(preferred))" }
    }

    static let invalid: [Invalid] = [
        Invalid(minimum: .nan, maximum: 60, preferred: 0, field: "minimum", says: "finite"),
        Invalid(minimum: 10, maximum: .infinity, preferred: 0, field: "maximum", says: "finite"),
        Invalid(minimum: 10, maximum: 60, preferred: -.infinity, field: "preferred", says: "finite"),
        Invalid(minimum: 0, maximum: 60, preferred: 0, field: "minimum", says: "at least 0.01 Hz (the lowest accepted rate), got 0"),
        Invalid(minimum: -5, maximum: 60, preferred: 0, field: "minimum", says: "at least 0.01 Hz (the lowest accepted rate), got -5"),
        // The inputs that used to crash the daemon in FrameRateMath.divisors (issue 10).
        Invalid(minimum: 1e-300, maximum: 1e-300, preferred: 0, field: "minimum", says: "at least 0.01 Hz (the lowest accepted rate), got 1e-300"),
        Invalid(minimum: .leastNonzeroMagnitude, maximum: 60, preferred: 0, field: "minimum", says: "got 5e-324"),
        Invalid(minimum: 1e-18, maximum: 1e-18, preferred: 0, field: "minimum", says: "got 1e-18"),
        Invalid(minimum: 3e-6, maximum: 3e-6, preferred: 0, field: "minimum", says: "got 3e-06"),
        Invalid(minimum: 0.00999, maximum: 60, preferred: 0, field: "minimum", says: "got 0.00999"),
        Invalid(minimum: 80, maximum: 60, preferred: 0, field: "maximum", says: "at least minimum"),
        Invalid(minimum: 10, maximum: 1001, preferred: 0, field: "maximum", says: "at most 1000"),
        // Rejected values are quoted exactly, never rounded (issue 10 §6).
        Invalid(minimum: 10, maximum: 1000.0001, preferred: 0, field: "maximum", says: "at most 1000 Hz (the highest accepted rate), got 1000.0001"),
        Invalid(minimum: 10, maximum: 1.7e308, preferred: 0, field: "maximum", says: "got 1.7e+308"),
        Invalid(minimum: 30, maximum: 60, preferred: 120, field: "preferred", says: "within minimum...maximum"),
        Invalid(minimum: 30, maximum: 60, preferred: 10, field: "preferred", says: "within minimum...maximum"),
        Invalid(minimum: 30, maximum: 60, preferred: -1, field: "preferred", says: "0 (no preference)"),
    ]

    @Test("invalid ranges are rejected with the broken rule, never clamped", arguments: invalid)
    func rejects(_ case_: Invalid) {
        #expect {
            _ = try FrameRateRange(minimum: case_.minimum, maximum: case_.maximum, preferred: case_.preferred)
        } throws: { error in
            let error = error as! FrameRateRangeError
            return error.field.rawValue == case_.field && error.message.contains(case_.says)
        }
    }

    @Test("valid ranges keep their values exactly")
    func accepts() throws {
        let range = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        #expect(range.minimum == 80 && range.maximum == 120 && range.preferred == 120)
        let monitor = try FrameRateRange(minimum: 10, maximum: 120, preferred: 0)
        #expect(!monitor.hasPreferredRate)
        #expect(try FrameRateRange(minimum: 1000, maximum: 1000, preferred: 1000).maximum == 1000)
        let slowest = try FrameRateRange(minimum: 0.01, maximum: 0.01, preferred: 0.01)
        #expect(slowest.minimum == FrameRateRange.lowestAcceptedRate)
    }

    @Test("error messages can quote the values as the caller received them")
    func quoting() {
        do {
            _ = try FrameRateRange(minimum: 10, maximum: 1000.0001)
            Issue.record("accepted a maximum above 1000 Hz")
        } catch {
            #expect(error.field == .maximum && error.rule == .aboveHighestRate)
            #expect(error.message(quoting: { $0 == .maximum ? "1000.00010" : "10" }) == "maximum must be at most 1000 Hz (the highest accepted rate), got 1000.00010")
        }
    }

    @Test("the slowest and fastest ranges get a callback cadence without trapping, on every built-in profile")
    func extremeCadences() throws {
        let slowest = try FrameRateRange(minimum: 0.01, maximum: 0.01)
        let fastest = try FrameRateRange(minimum: 1000, maximum: 1000, preferred: 1000)
        for profile in DisplayProfile.builtIn {
            for refresh in profile.supportedRates {
                let slow = CallbackCadence(range: slowest, refresh: refresh)
                #expect(slow.isInsideRange && FrameRateMath.equal(slow.callbackRate, 0.01), "\(refresh) Hz")
                #expect(slow.divisor == Int((refresh / 0.01).rounded()))
                let fast = CallbackCadence(range: fastest, refresh: refresh)
                #expect(fast.divisor == 1 && !fast.isInsideRange)
            }
        }
    }

    @Test("float-to-integer conversions clamp instead of trapping")
    func wholeNumbers() {
        #expect(FrameRateMath.wholeNumber(.nan, clampedTo: 1...Int.max) == 1)
        #expect(FrameRateMath.wholeNumber(.infinity, clampedTo: 0...Int.max) == Int.max)
        #expect(FrameRateMath.wholeNumber(-.infinity, clampedTo: 0...Int.max) == 0)
        #expect(FrameRateMath.wholeNumber(1e300, clampedTo: 0...Int.max) == Int.max)
        #expect(FrameRateMath.wholeNumber(9.2233720368547748e18, clampedTo: 0...Int.max) == 9_223_372_036_854_774_784)
        #expect(FrameRateMath.wholeNumber(1e300, clampedTo: 0...UInt64.max / 2) == UInt64.max / 2)
        #expect(FrameRateMath.wholeNumber(-3.7, clampedTo: Int64.min...Int64.max) == -3)
        #expect(FrameRateMath.wholeNumber(41.9, clampedTo: 0...40) == 40)
        #expect(FrameRateMath.wholeNumber(12.0, clampedTo: 0...40) == 12)
        // Bounds a double cannot hold exactly: the largest doubles below them, and past them.
        #expect(FrameRateMath.wholeNumber(1.8446744073709550e19, clampedTo: 0...UInt64.max) == 18_446_744_073_709_549_568)
        #expect(FrameRateMath.wholeNumber(-9.2233720368547748e18, clampedTo: Int.min...Int.max) == -9_223_372_036_854_774_784)
        #expect(FrameRateMath.wholeNumber(-9.2233720368547758e18, clampedTo: Int.min...Int.max) == Int.min)
        let roundsDown: Int64 = (1 << 62) + 1  // Double(roundsDown) == 2^62
        #expect(FrameRateMath.wholeNumber(4.6116860184273874e18, clampedTo: 0...roundsDown) == 4_611_686_018_427_387_392)
        #expect(FrameRateMath.wholeNumber(4.611686018427387904e18, clampedTo: 0...roundsDown) == roundsDown)
        let roundsUp: Int64 = (1 << 62) - 1  // Double(roundsUp) == 2^62
        #expect(FrameRateMath.wholeNumber(4.6116860184273874e18, clampedTo: 0...roundsUp) == 4_611_686_018_427_387_392)
        #expect(FrameRateMath.wholeNumber(-2.5, clampedTo: UInt8.min...UInt8.max) == 0)
        #expect(FrameRateMath.wholeNumber(255.9, clampedTo: UInt8.min...UInt8.max) == 255)
    }

    @Test("rates are formatted for display without ever printing inf for a finite value")
    func formatting() {
        #expect(FrameRateMath.format(120) == "120")
        #expect(FrameRateMath.format(23.976) == "23.976")
        #expect(FrameRateMath.format(0.01) == "0.01")
        #expect(FrameRateMath.format(1.7e308) == "1.7e+308")
        #expect(FrameRateMath.format(1e-300) == "1e-300")
        #expect(FrameRateMath.exactText(1000.0001) == "1000.0001")
        #expect(FrameRateMath.exactText(60) == "60")
    }

    @Test("profiles: built-ins, custom lists and clear errors")
    func profiles() throws {
        #expect(DisplayProfile.promotionPhone.supportedRates == [120, 80, 60, 48, 40, 30, 24, 20, 16, 15, 12, 10])
        #expect(DisplayProfile.promotionPhone.requiresEntitlementAbove60Hz)
        #expect(DisplayProfile.promotionPad.supportedRates == [120, 60, 40, 30, 24])
        #expect(!DisplayProfile.promotionPad.requiresEntitlementAbove60Hz)
        #expect(try DisplayProfile.named("fixed-60").supportedRates == [60])
        let custom = try DisplayProfile.named("custom:48,144,72:entitlement")
        #expect(custom.supportedRates == [144, 72, 48] && custom.requiresEntitlementAbove60Hz)
        #expect(throws: DisplayProfileError.self) { try DisplayProfile.named("promotion-watch") }
        #expect(throws: DisplayProfileError.self) { try DisplayProfile.named("custom:60,60") }
        #expect(throws: DisplayProfileError.self) { try DisplayProfile.named("custom:60,abc") }
        #expect(throws: DisplayProfileError.self) { try DisplayProfile(name: "empty", supportedRates: []) }
        #expect(throws: DisplayProfileError.self) { try DisplayProfile(name: "zero", supportedRates: [0, 60]) }
    }

    @Test(
        "custom profiles take plain decimal rates in 0.01...1000 Hz, and name what they reject",
        arguments: [
            ("custom:1e-300", "'1e-300' is not a rate in Hz"),
            ("custom:60,nan", "'nan' is not a rate in Hz"),
            ("custom:inf", "'inf' is not a rate in Hz"),
            ("custom:0x3C", "'0x3C' is not a rate in Hz"),
            ("custom:-60", "'-60' is not a rate in Hz"),
            ("custom:0.001", "every rate must be a number of Hz in 0.01...1000, got 0.001"),
            ("custom:1000.0001", "got 1000.0001"),
            ("custom:0", "got 0"),
            ("custom:\u{FEFF}60", "'<U+FEFF BYTE ORDER MARK>60' is not a rate in Hz"),
            ("custom:60,\u{A0}30", "'<U+00A0 NO-BREAK SPACE>30' is not a rate in Hz"),
            ("promotion\u{200B}phone", "unknown display profile 'promotion<U+200B ZERO WIDTH SPACE>phone'"),
        ]
    )
    func customProfileErrors(specification: String, says: String) {
        #expect {
            _ = try DisplayProfile.named(specification)
        } throws: { error in
            "\(error)".contains(says)
        }
    }

    @Test("custom profiles at the bounds are accepted")
    func customProfileBounds() throws {
        #expect(try DisplayProfile.named("custom:1000,59.94,0.01").supportedRates == [1000, 59.94, 0.01])
        #expect(try DisplayProfile.named("custom: 60 , 30").supportedRates == [60, 30])
    }
}

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
        Invalid(minimum: 0, maximum: 60, preferred: 0, field: "minimum", says: "greater than 0"),
        Invalid(minimum: -5, maximum: 60, preferred: 0, field: "minimum", says: "greater than 0"),
        Invalid(minimum: 80, maximum: 60, preferred: 0, field: "maximum", says: "at least minimum"),
        Invalid(minimum: 10, maximum: 1001, preferred: 0, field: "maximum", says: "at most 1000"),
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
            return error.field == case_.field && error.message.contains(case_.says)
        }
    }

    @Test("valid ranges keep their values exactly")
    func accepts() throws {
        let range = try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)
        #expect(range.minimum == 80 && range.maximum == 120 && range.preferred == 120)
        let monitor = try FrameRateRange(minimum: 10, maximum: 120, preferred: 0)
        #expect(!monitor.hasPreferredRate)
        #expect(try FrameRateRange(minimum: 1000, maximum: 1000, preferred: 1000).maximum == 1000)
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
}

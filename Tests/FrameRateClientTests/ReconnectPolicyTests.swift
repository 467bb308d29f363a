import Testing

@testable import FrameRateClient

@Suite("ReconnectPolicy backoff, stepped with values")
struct ReconnectPolicyTests {
    @Test("the defaults: 10 ms doubling, capped at 1 s, forever")
    func defaults() {
        let policy = ReconnectPolicy.default
        #expect(policy.initialDelay == .milliseconds(10))
        #expect(policy.maximumDelay == .seconds(1))
        #expect(policy.multiplier == 2)
        #expect(policy.maximumAttempts == nil)
        let delays = (0..<10).map { policy.baseDelay(attempt: $0) }
        #expect(delays == [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000].map { Duration.milliseconds($0) })
        #expect(policy.allowsAttempt(1_000_000))
    }

    @Test("a huge attempt number stays at the cap (no overflow)")
    func hugeAttempt() {
        let policy = ReconnectPolicy(multiplier: 10)
        #expect(policy.baseDelay(attempt: 10_000) == .seconds(1))
        #expect(policy.delay(attempt: Int.max, random: 0.99) == .seconds(1))
        #expect(policy.baseDelay(attempt: -3) == .milliseconds(10))
    }

    @Test("jitter scales by 1 ± jitter, and never past the maximum")
    func jitter() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1), multiplier: 2, jitter: 0.2)
        #expect(policy.delay(attempt: 0, random: 0.5) == .milliseconds(100))
        #expect(approximately(policy.delay(attempt: 0, random: 0), .milliseconds(80)))
        #expect(approximately(policy.delay(attempt: 0, random: 1), .milliseconds(120)))
        #expect(approximately(policy.delay(attempt: 2, random: 0.75), .milliseconds(440)))
        // At the cap, stretching is cut back to the maximum; shrinking is not.
        #expect(policy.delay(attempt: 9, random: 1) == .seconds(1))
        #expect(approximately(policy.delay(attempt: 9, random: 0), .milliseconds(800)))
        // Out-of-range randoms are clamped.
        #expect(policy.delay(attempt: 0, random: -5) == policy.delay(attempt: 0, random: 0))
    }

    @Test("no jitter and a multiplier of 1: a constant delay")
    func constant() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(50), multiplier: 1, jitter: 0)
        #expect((0..<5).map { policy.delay(attempt: $0, random: 0.9) } == Array(repeating: .milliseconds(50), count: 5))
    }

    @Test("maximumAttempts limits the attempts in a row")
    func maximumAttempts() {
        let policy = ReconnectPolicy(maximumAttempts: 3)
        #expect([0, 1, 2, 3, 4].map(policy.allowsAttempt) == [true, true, true, false, false])
    }

    private func approximately(_ a: Duration, _ b: Duration) -> Bool {
        abs((a - b) / .nanoseconds(1)) < 1000  // within 1 µs
    }
}

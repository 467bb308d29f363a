/// How a ``FrameRateConnection`` made with `reconnect:` comes back after the
/// daemon goes away: capped exponential backoff with jitter.
///
/// Attempt `n` (counting from 0, the first attempt after the connection
/// dropped) waits ``baseDelay(attempt:)`` `= min(maximumDelay, initialDelay · multiplierⁿ)`,
/// scaled by a random factor in `[1 − jitter, 1 + jitter]` and capped at
/// ``maximumDelay`` again (``delay(attempt:random:)``). With the defaults the
/// waits are about 10, 20, 40 … 640 ms, then 1 s until the daemon answers, so a
/// restarted daemon is found within about a second of it listening.
///
/// The count starts over only after a connection that worked (the daemon answered a
/// request or sent a tick); one the daemon accepted and closed at once, as at its
/// connection limit, counts as a failed attempt.
///
/// Only an established connection is re-established: the first
/// ``FrameRateConnection/connect(socketPath:eventLoopGroup:reconnect:)`` still
/// fails at once when nothing listens.
public struct ReconnectPolicy: Hashable, Sendable {
    /// The wait before the first attempt.
    public var initialDelay: Duration
    /// The longest wait between attempts (jitter included).
    public var maximumDelay: Duration
    /// The factor each wait grows by, at least 1.
    public var multiplier: Double
    /// How far each wait is randomly stretched or shrunk, as a fraction in `0...1`
    /// (0.1: ±10 %), so many clients of a restarted daemon do not all connect at once.
    public var jitter: Double
    /// How many attempts in a row may fail before the connection gives up and
    /// closes for good (its links end with ``DisplayLinkEnd/connectionClosed``);
    /// `nil` (the default) tries forever.
    public var maximumAttempts: Int?

    /// A policy; the defaults are 10 ms doubling up to 1 s, ±10 % jitter, forever.
    public init(
        initialDelay: Duration = .milliseconds(10),
        maximumDelay: Duration = .seconds(1),
        multiplier: Double = 2,
        jitter: Double = 0.1,
        maximumAttempts: Int? = nil
    ) {
        precondition(initialDelay >= .zero && maximumDelay >= initialDelay, "need 0 <= initialDelay <= maximumDelay")
        precondition(multiplier >= 1 && multiplier.isFinite, "multiplier must be finite and at least 1")
        precondition(jitter >= 0 && jitter <= 1, "jitter must be within 0...1")
        precondition(maximumAttempts.map { $0 > 0 } ?? true, "maximumAttempts must be positive")
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
        self.maximumAttempts = maximumAttempts
    }

    /// 10 ms doubling up to 1 s, ±10 % jitter, trying forever (what `framectl register` uses).
    public static let `default` = ReconnectPolicy()

    /// The wait before attempt `attempt` (0 is the first) without jitter:
    /// `min(maximumDelay, initialDelay · multiplier^attempt)`.
    public func baseDelay(attempt: Int) -> Duration {
        let grown = Self.seconds(initialDelay) * Self.power(multiplier, max(0, attempt))
        let capped = min(Self.seconds(maximumDelay), grown)
        return capped.isFinite ? .seconds(capped) : maximumDelay
    }

    /// The wait before attempt `attempt` with jitter: ``baseDelay(attempt:)`` times
    /// `1 + jitter · (2 · random − 1)`, at most ``maximumDelay``.
    /// - Parameter random: a number in `0..<1` (0.5 means no jitter).
    public func delay(attempt: Int, random: Double) -> Duration {
        let factor = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
        let seconds = min(Self.seconds(baseDelay(attempt: attempt)) * factor, Self.seconds(maximumDelay))
        return .seconds(max(0, seconds))
    }

    /// Whether attempt `attempt` (0 is the first) may still be made.
    public func allowsAttempt(_ attempt: Int) -> Bool {
        maximumAttempts.map { attempt < $0 } ?? true
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// `base^exponent`, exact for the small exponents that matter and `inf` once it overflows.
    private static func power(_ base: Double, _ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<min(exponent, 2048) {
            result *= base
            if result.isInfinite { break }
        }
        return result
    }
}

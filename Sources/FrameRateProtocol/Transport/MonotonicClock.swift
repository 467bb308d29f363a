import FrameRateModel
public import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clock every time on the wire is measured on: `CLOCK_MONOTONIC`, the
/// same clock `clock_gettime(CLOCK_MONOTONIC)` reads in C, `time.monotonic()`
/// in Python, and NIO's `NIODeadline` on Linux. Timestamps sent by the daemon
/// are comparable with each of those in any process on the machine.
public struct MonotonicClock: Clock, Sendable {
    /// A reading of `CLOCK_MONOTONIC`: time since an unspecified point (boot).
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// Time since `CLOCK_MONOTONIC`'s origin.
        public var sinceOrigin: Duration

        /// Wraps a duration since the clock's origin.
        public init(sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }
        /// An instant from whole nanoseconds since the origin.
        public init(nanoseconds: Int64) { self.sinceOrigin = .nanoseconds(nanoseconds) }
        /// An instant from seconds since the origin (the wire format).
        /// Seconds beyond `Int64` nanoseconds (about ±292 years) are clamped; NaN gives the origin.
        public init(seconds: Double) {
            let nanoseconds = seconds.isNaN ? 0 : FrameRateMath.wholeNumber((seconds * 1e9).rounded(), clampedTo: Int64.min...Int64.max)
            self.init(nanoseconds: nanoseconds)
        }

        /// Whole nanoseconds since the origin (rounded down).
        public var nanoseconds: Int64 {
            let (seconds, attoseconds) = sinceOrigin.components
            return WireTime.saturatingNanoseconds(seconds: seconds, plus: attoseconds / 1_000_000_000)
        }
        /// Seconds since the origin, as sent on the wire.
        public var seconds: Double { Double(nanoseconds) / 1e9 }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(sinceOrigin: sinceOrigin + duration) }
        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.sinceOrigin - sinceOrigin }
        /// Orders by time.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceOrigin < rhs.sinceOrigin }
        /// Seconds with nanosecond precision.
        public var description: String { WireTime.format(nanoseconds: nanoseconds) }
    }

    /// A clock reading `CLOCK_MONOTONIC`.
    public init() {}

    /// Reads `CLOCK_MONOTONIC` now.
    public var now: Instant { Self.now }

    /// Reads `CLOCK_MONOTONIC` now.
    public static var now: Instant { Instant(nanoseconds: nowNanoseconds) }

    /// Reads `CLOCK_MONOTONIC` now, as whole nanoseconds: the one place the clock is read,
    /// and the cheapest form for per-read timing (no `Duration` arithmetic).
    @inline(__always)
    public static var nowNanoseconds: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps until `deadline` on `CLOCK_MONOTONIC`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let remaining = Self.now.duration(to: deadline)
        if remaining > .zero { try await Task.sleep(for: remaining, tolerance: tolerance, clock: .suspending) }
    }
}

/// How times are written on the wire: seconds on `CLOCK_MONOTONIC` with
/// nine decimals (nanosecond precision).
public enum WireTime {
    /// `seconds.nnnnnnnnn` for a count of nanoseconds, with a minus sign before a negative
    /// one (`-1.500000000`): the text ``write(nanoseconds:into:)`` writes. Times on the wire
    /// are never negative; a negative count used to trap here.
    public static func format(nanoseconds: Int64) -> String {
        var buffer = ByteBuffer()
        write(nanoseconds: nanoseconds, into: &buffer)
        return String(buffer: buffer)
    }

    /// Appends `nanoseconds` as ``format(nanoseconds:)`` writes it, in place: the tick
    /// encoder's shared fields hold four times a vsync, which building each as a `String`
    /// made the larger part of a vsync's fixed cost with few links.
    public static func write(nanoseconds: Int64, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumBytes) { write(nanoseconds: nanoseconds, to: $0, at: 0) }
    }

    /// The most bytes ``write(nanoseconds:to:at:)`` writes: a sign, the seconds (at most 20
    /// digits), the point and nine decimals.
    static let maximumBytes = 1 + 20 + 1 + 9

    /// Writes `nanoseconds` as ``format(nanoseconds:)`` writes it to `out` at `at`, which
    /// must have ``maximumBytes`` of room from there; returns the offset after it.
    static func write(nanoseconds: Int64, to out: UnsafeMutableRawBufferPointer, at start: Int) -> Int {
        precondition(start >= 0 && out.count - start >= maximumBytes, "no room for a time")
        let base = out.baseAddress!
        var at = start
        if nanoseconds < 0 {
            base.storeBytes(of: UInt8(ascii: "-"), toByteOffset: at, as: UInt8.self)
            at += 1
        }
        let magnitude = nanoseconds.magnitude
        let point = DecimalText.write(magnitude / 1_000_000_000, to: out, at: at)
        base.storeBytes(of: UInt8(ascii: "."), toByteOffset: point, as: UInt8.self)
        DecimalText.writeNineDigits(magnitude % 1_000_000_000, to: base, at: point + 1)
        return point + 1 + 9
    }

    /// Whole nanoseconds in `duration` (rounded to nearest, saturating: ``FrameRateMath/nanoseconds(_:)``).
    public static func nanoseconds(of duration: Duration) -> Int64 {
        FrameRateMath.nanoseconds(duration)
    }

    /// `seconds * 10^9 + nanoseconds`, saturating at `Int64.min`/`Int64.max` (about ±292
    /// years) instead of trapping on overflow. `nanoseconds` is below 10^9 in magnitude.
    static func saturatingNanoseconds(seconds: Int64, plus nanoseconds: Int64) -> Int64 {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = scaled.addingReportingOverflow(nanoseconds)
        guard !overflowSum else { return scaled < 0 ? .min : .max }
        return sum
    }
}

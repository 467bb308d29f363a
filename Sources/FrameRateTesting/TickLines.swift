import FrameRateProtocol
import NIOCore

/// Tick lines exactly as the daemon's ``TickLineEncoder`` writes them, for the tests of
/// what reads them (line buffers, sessions, the load generator's receive table).
package enum TickLines {
    /// One canonical Tick line with its `\n`: `link`'s `sequence`-th interval on a 120 Hz
    /// display, starting at `timestamp` (nanoseconds on `CLOCK_MONOTONIC`).
    package static func line(link: UInt64, sequence: UInt64, skipped: UInt64 = 0, timestamp: Int64 = 5_000_000_000) -> String {
        let period: Int64 = 8_333_333
        let shared = TickLineEncoder.sharedFields(
            timestamp: timestamp, targetTimestamp: timestamp + period, duration: period, refreshRate: 120, callbackRate: 120,
            allocator: ByteBufferAllocator()
        )
        var line = ByteBuffer()
        TickLineEncoder.write(link: link, sequence: sequence, skipped: skipped, shared: shared, into: &line)
        return String(buffer: line)
    }
}

/// Deadlines for tests that wait on a socket.
package enum TestDeadline {
    /// Ten seconds from now (nanoseconds on `CLOCK_MONOTONIC`): never reached by a test that passes.
    package static func later() -> Int64 { MonotonicClock.nowNanoseconds + 10_000_000_000 }
}

package import Synchronization

/// Counts the tick plane's watchdog pings in ``ServerHarness``.
package final class WatchdogPings: Sendable {
    package let count = Atomic<Int>(0)
    package init() {}
    package var value: Int { count.load(ordering: .relaxed) }
}

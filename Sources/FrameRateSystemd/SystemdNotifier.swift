import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager about the daemon's state through `$NOTIFY_SOCKET`
/// (`sd_notify`): readiness, a status line, reloading, stopping and watchdog pings.
///
/// Without `$NOTIFY_SOCKET` (not started by systemd) every call does nothing.
/// Safe from any thread: `sd_notify` sends one datagram per call and keeps no state.
public struct SystemdNotifier: Sendable {
    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set).
    public let isEnabled: Bool

    /// A notifier for this process.
    public init() {
        isEnabled = getenv("NOTIFY_SOCKET").map { $0.pointee != 0 } ?? false
    }

    /// `READY=1`: the daemon accepts connections. `status` is sent along as `STATUS=`.
    public func ready(status: String? = nil) {
        send(["READY=1"] + (status.map { ["STATUS=\(Self.oneLine($0))"] } ?? []))
    }

    /// `STATUS=`: a one-line summary shown by `systemctl status`.
    public func status(_ line: String) {
        send(["STATUS=\(Self.oneLine(line))"])
    }

    /// `RELOADING=1` with `MONOTONIC_USEC` (`CLOCK_MONOTONIC` µs), as `Type=notify-reload`
    /// and `Type=notify` expect; follow with ``ready(status:)`` when done.
    public func reloading(monotonicMicroseconds: UInt64) {
        send(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"])
    }

    /// `STOPPING=1`: graceful shutdown has begun.
    public func stopping() {
        send(["STOPPING=1"])
    }

    /// `WATCHDOG=1`: the main loop is alive.
    public func watchdog() {
        send(["WATCHDOG=1"])
    }

    /// The watchdog interval systemd expects pings within (`$WATCHDOG_USEC`, for this
    /// process), or `nil` when the watchdog is off.
    public static func watchdogInterval() -> Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// The message as sent: assignments joined by newlines.
    static func message(_ assignments: [String]) -> String { assignments.joined(separator: "\n") }

    private func send(_ assignments: [String]) {
        guard isEnabled else { return }
        _ = sd_notify(0, Self.message(assignments))
    }

    /// Status lines must not contain newlines (each would start a new assignment).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}

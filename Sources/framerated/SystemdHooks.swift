import FrameRateProtocol
import FrameRateServer
import FrameRateSystemd
import Synchronization

/// Connects the server's lifecycle to systemd: readiness, the status line,
/// stopping, and watchdog pings from the vsync loop itself (so a stalled loop
/// stops pinging and systemd restarts the daemon).
enum SystemdHooks {
    static func make(notifier: SystemdNotifier) -> FrameRateServer.Hooks {
        guard notifier.isEnabled else { return FrameRateServer.Hooks() }
        let lastStatus = Mutex<String>("")
        let watchdog = Mutex(SystemdNotifier.watchdogInterval().map { WatchdogSchedule<MonotonicClock>(interval: $0) })
        return FrameRateServer.Hooks(
            ready: { _ in notifier.ready(status: lastStatus.withLock { $0 }) },
            status: { line in
                // Only changes are sent: the status hook fires on every registration.
                let changed = lastStatus.withLock { last -> Bool in
                    defer { last = line }
                    return last != line
                }
                if changed { notifier.status(line) }
            },
            vsync: {
                let due = watchdog.withLock { schedule -> Bool in
                    guard schedule != nil else { return false }
                    return schedule!.vsync(at: MonotonicClock.now)
                }
                if due { notifier.watchdog() }
            },
            stopping: { notifier.stopping() }
        )
    }
}

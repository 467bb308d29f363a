import FrameRateProtocol
import FrameRateServer
import FrameRateSystemd
import Synchronization

/// Connects the server's lifecycle to systemd: readiness, the status line, stopping,
/// and watchdog pings from the tick plane itself at half the watchdog interval (so a
/// stalled tick plane stops pinging and systemd restarts the daemon).
enum SystemdHooks {
    static func make(notifier: SystemdNotifier) -> FrameRateServer.Hooks {
        guard notifier.isEnabled else { return FrameRateServer.Hooks() }
        let lastStatus = Mutex<String>("")
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
            watchdogInterval: SystemdNotifier.watchdogInterval().map { $0 / 2 },
            watchdog: { notifier.watchdog() },
            stopping: { notifier.stopping() }
        )
    }
}

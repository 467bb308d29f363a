#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The controlling terminal, for `framectl top`: whether stdout is one, its size, and a
/// mode where keys arrive one by one without echo (Ctrl-C as a byte, so the command can
/// stop its trace and restore the screen), restored on ``restore()``.
final class Terminal {
    private var saved: termios?

    /// Whether standard output (and input) are terminals.
    static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 && isatty(STDIN_FILENO) == 1 }

    /// Columns and lines of the terminal on stdout; 80×24 when unknown.
    static var size: (width: Int, height: Int) {
        var size = winsize()
        let status = withUnsafeMutablePointer(to: &size) { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) }
        guard status == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Keys one at a time, no echo, no signals from keys; the alternate screen.
    func enterRawMode() {
        var attributes = termios()
        guard tcgetattr(STDIN_FILENO, &attributes) == 0 else { return }
        saved = attributes
        attributes.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
        Console.raw("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// Restores what ``enterRawMode()`` changed.
    func restore() {
        guard var attributes = saved else { return }
        Console.raw("\u{1B}[?25h\u{1B}[?1049l")
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &attributes)
        saved = nil
    }

    /// A key pressed, if one is waiting (never blocks).
    static func pendingKey() -> UInt8? {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return nil }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    /// `14:02:33`, local time.
    static func clock() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}

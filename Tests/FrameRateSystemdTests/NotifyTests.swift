import FrameRateModel
import FrameRateSystemd
import Foundation
import Testing

/// The notify messages, received on a `NOTIFY_SOCKET` the test binds itself.
/// Serialized: the tests set process-wide environment variables.
@Suite("sd_notify messages", .serialized)
struct NotifyTests {
    /// A datagram socket bound at a fresh path, exported as `$NOTIFY_SOCKET`.
    final class NotifySocket {
        let path: String
        let descriptor: Int32

        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(bound == 0)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setenv("NOTIFY_SOCKET", path, 1)
        }

        /// The next datagram, or nil after the 2 s receive timeout.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        deinit {
            unsetenv("NOTIFY_SOCKET")
            close(descriptor)
            unlink(path)
        }
    }

    @Test("ready, status, reloading, stopping and watchdog send the documented assignments")
    func messages() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier()
        #expect(notifier.isEnabled)
        notifier.ready(status: "display 0: 120 Hz (1 link); 1 client")
        #expect(socket.receive() == "READY=1\nSTATUS=display 0: 120 Hz (1 link); 1 client")
        notifier.status("two\nlines")
        #expect(socket.receive() == "STATUS=two lines", "a newline would start a new assignment")
        notifier.reloading(monotonicMicroseconds: 123_456_789)
        #expect(socket.receive() == "RELOADING=1\nMONOTONIC_USEC=123456789")
        notifier.ready()
        #expect(socket.receive() == "READY=1")
        notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
        notifier.stopping()
        #expect(socket.receive() == "STOPPING=1")
    }

    @Test("without NOTIFY_SOCKET nothing is sent and nothing fails")
    func disabled() {
        unsetenv("NOTIFY_SOCKET")
        let notifier = SystemdNotifier()
        #expect(!notifier.isEnabled)
        notifier.ready(status: "ignored")
        notifier.watchdog()
    }

    @Test("the watchdog interval comes from WATCHDOG_USEC for this process only")
    func watchdogInterval() {
        setenv("WATCHDOG_USEC", "4000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        #expect(SystemdNotifier.watchdogInterval() == .seconds(4))
        setenv("WATCHDOG_PID", "1", 1)
        #expect(SystemdNotifier.watchdogInterval() == nil, "meant for another process")
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
        #expect(SystemdNotifier.watchdogInterval() == nil)
    }
}

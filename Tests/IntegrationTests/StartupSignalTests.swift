import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether process `pid` has a handler for `signal`, from the `SigCgt` mask of
/// `/proc/PID/status`; `nil` once the process is gone.
private func catches(_ signal: Int32, pid: pid_t) -> Bool? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
        let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return nil }
    return mask & (1 << UInt64(signal - 1)) != 0
}

/// A SIGTERM during start-up (a `systemctl stop` or restart right after a start) stops the
/// daemon gracefully: its handler is installed first thing in `run`, before the socket is
/// bound and the service group built, and the signal waits in the handler's pipe until the
/// signal service runs (docs/operations.md, "Signals").
///
/// The test sends SIGTERM as soon as `/proc/PID/status` shows the handler, which is the
/// earliest moment the daemon can handle it. What it checks cannot all be forced: the
/// order "handler before bind" is caught only when one of its polls falls between a bind
/// and a late handler (with the handler in the signal service's `run`, as before
/// `cc64fa6`, that gap lasts well under a millisecond and three runs did not see it). The
/// graceful exit, its log line and the removed socket file are checked every time.
@Suite("signals during start-up")
struct StartupSignalTests {
    @Test("SIGTERM as soon as the daemon catches it: caught before the socket is bound, a graceful exit, no socket file left", arguments: 0..<3)
    func earlySIGTERM(round: Int) async throws {
        let directory = try Paths.temporaryDirectory()
        let socket = directory.appendingPathComponent("framerated.sock").path
        let process = try TestProcess(
            executable: Paths.framerated, arguments: ["--socket", socket, "--log-level", "debug"],
            stderrURL: directory.appendingPathComponent("framerated.log")
        )
        defer { process.signal(SIGKILL) }

        // Poll from the spawn on until the handler is in. The socket file is looked at
        // before the mask in each turn, so a file seen there was bound before the handler
        // was in, however the two polls are delayed.
        let deadline = ContinuousClock.now + .seconds(20)
        var boundBeforeCaught = false
        while true {
            let bound = FileManager.default.fileExists(atPath: socket)
            guard let caught = catches(SIGTERM, pid: process.pid) else {
                Issue.record("framerated exited before catching SIGTERM: \(process.stderr)")
                return
            }
            if caught { break }
            if bound { boundBeforeCaught = true }
            guard ContinuousClock.now < deadline else {
                Issue.record("framerated did not catch SIGTERM within 20 s: \(process.stderr)")
                return
            }
            try await Task.sleep(for: .microseconds(200))
        }
        process.signal(SIGTERM)

        #expect(await process.waitForExit() == 0, "a graceful exit, not the signal's default action: \(process.stderr)")
        #expect(!boundBeforeCaught, "the socket was bound before SIGTERM had a handler")
        #expect(process.stderr.contains("SIGTERM: stopping gracefully"), "\(process.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed on the way out")
    }
}

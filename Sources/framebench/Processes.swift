#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateClient

/// One reading of a process's CPU time and memory from `/proc/PID`.
struct ProcessSample: Sendable {
    /// User plus system CPU time of every thread, seconds (`/proc/PID/stat` fields 14 and 15).
    var cpuSeconds: Double
    /// User plus system CPU time of the threads named `fanout-*` (the daemon's tick plane),
    /// seconds: what compares with the C floor's server, which only sends ticks. 0 for a
    /// process without such threads.
    var tickPlaneCPUSeconds: Double = 0
    /// Resident set size now, KiB (`VmRSS`).
    var rssKiB: Int
    /// Peak resident set size, KiB (`VmHWM`).
    var peakRSSKiB: Int

    /// Reads `pid`'s figures, or `nil` when it is gone.
    static func read(pid: pid_t) -> ProcessSample? {
        guard let (_, ticks) = cpuTicks(stat: "/proc/\(pid)/stat") else { return nil }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        var tickPlaneTicks = 0.0
        for thread in System.directoryEntries("/proc/\(pid)/task") {
            if let (name, ticks) = cpuTicks(stat: "/proc/\(pid)/task/\(thread)/stat"), name.hasPrefix("fanout-") { tickPlaneTicks += ticks }
        }
        var rss = 0
        var peak = 0
        if let status = System.readFile("/proc/\(pid)/status") {
            for line in status.split(separator: "\n") {
                if line.hasPrefix("VmRSS:") { rss = Self.kibibytes(line) }
                if line.hasPrefix("VmHWM:") { peak = Self.kibibytes(line) }
            }
        }
        return ProcessSample(
            cpuSeconds: ticks / ticksPerSecond, tickPlaneCPUSeconds: tickPlaneTicks / ticksPerSecond, rssKiB: rss, peakRSSKiB: peak
        )
    }

    /// The name and the user plus system CPU time, in clock ticks, of a `stat` file of `/proc`
    /// (a process's or one thread's), or `nil` when it is gone.
    private static func cpuTicks(stat path: String) -> (name: Substring, ticks: Double)? {
        guard let stat = System.readFile(path), let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (stat[stat.index(after: open)..<close], user + system)
    }

    private static func kibibytes(_ line: Substring) -> Int {
        line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }

    /// CPU used between two samples, in percent of one core over `seconds` of wall time.
    static func cpuPercent(from start: ProcessSample?, to end: ProcessSample?, over seconds: Double) -> Double {
        guard let start, let end, seconds > 0 else { return 0 }
        return 100 * (end.cpuSeconds - start.cpuSeconds) / seconds
    }

    /// The tick plane's CPU between two samples, in percent of one core over `seconds`
    /// (threads that ended in between are not counted).
    static func tickPlaneCPUPercent(from start: ProcessSample?, to end: ProcessSample?, over seconds: Double) -> Double {
        guard let start, let end, seconds > 0 else { return 0 }
        return 100 * (end.tickPlaneCPUSeconds - start.tickPlaneCPUSeconds) / seconds
    }
}

/// A child process started with `posix_spawn`, optionally with pipes to its stdin and from its stdout.
struct ChildProcess {
    /// The child's pid.
    let pid: pid_t
    /// The parent's end of the child's stdin pipe, if piped.
    let stdin: Int32?
    /// The child's stdout pipe, read line by line, if piped.
    let output: LineSession?

    /// Starts `path` with `arguments` (not including argv[0]).
    /// - Parameters:
    ///   - pipeStdin, pipeStdout: connect the child's stdin/stdout to pipes held by the parent.
    ///   - stderrPath: a file that receives the child's stderr (appended), or `nil` to share ours.
    static func spawn(
        _ path: String, _ arguments: [String], pipeStdin: Bool = false, pipeStdout: Bool = false, stderrPath: String? = nil
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var toChild: (read: Int32, write: Int32)?
        var fromChild: (read: Int32, write: Int32)?
        if pipeStdin {
            var fds: [Int32] = [0, 0]
            try makePipe(&fds)
            toChild = (fds[0], fds[1])
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        }
        if pipeStdout {
            var fds: [Int32] = [0, 0]
            try makePipe(&fds)
            fromChild = (fds[0], fds[1])
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        }
        if let stderrPath {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, environ)
        if let toChild { close(toChild.read) }
        if let fromChild { close(fromChild.write) }
        guard status == 0 else {
            if let toChild { close(toChild.write) }
            if let fromChild { close(fromChild.read) }
            throw BenchError("cannot start \(path): \(String(cString: strerror(status)))")
        }
        return ChildProcess(pid: pid, stdin: toChild?.write, output: fromChild.map { LineSession(socket: ClientSocket(adopting: $0.read)) })
    }

    /// A pipe whose ends are closed on exec (the child gets its end through `dup2`).
    private static func makePipe(_ fds: inout [Int32]) throws {
        guard pipe(&fds) == 0 else { throw BenchError.errno("pipe") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    /// Waits up to `timeout` seconds for the child to exit.
    /// - Returns: its wait status, or `nil` if it is still running.
    func wait(timeout: Double) -> Int32? {
        let deadline = System.monotonicNanoseconds() + Int64(timeout * 1e9)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status }
            if result < 0 && Glibc.errno != EINTR { return status }
            if System.monotonicNanoseconds() >= deadline { return nil }
            System.sleep(seconds: 0.005)
        }
    }

    /// Sends `signal`, waits up to `grace` seconds, then kills; always reaps the child
    /// and closes the pipes. Call once: after it the pid may belong to another process.
    func stop(signal: Int32 = SIGTERM, grace: Double = 5) {
        kill(pid, signal)
        reap(timeout: grace)
    }

    /// Waits up to `timeout` seconds for the child to exit by itself, kills it if it has not,
    /// reaps it and closes the pipes. Call once.
    func reap(timeout: Double) {
        if wait(timeout: timeout) == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
        if let stdin { close(stdin) }
        output?.socket.close()
    }
}

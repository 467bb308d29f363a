#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateClient
import FrameRateProtocol

/// The framerated being measured: one framebench started itself (`--spawn-daemon`),
/// or one already running on a socket.
final class DaemonUnderTest {
    /// The socket clients connect to.
    let socketPath: String
    /// The daemon's pid, for `/proc/PID`.
    let pid: pid_t
    /// Set when framebench started the daemon (and must stop it).
    private let child: ChildProcess?
    /// The temporary directory holding a spawned daemon's socket and log.
    private let directory: String?
    /// Nanoseconds from `posix_spawn` to the first answered Health/Check (spawned daemons only).
    let startupNanoseconds: Int64?

    private init(socketPath: String, pid: pid_t, child: ChildProcess?, directory: String?, startupNanoseconds: Int64?) {
        self.socketPath = socketPath
        self.pid = pid
        self.child = child
        self.directory = directory
        self.startupNanoseconds = startupNanoseconds
    }

    /// The `framerated` beside this executable, unless `explicit` names one.
    static func binary(explicit: String?) throws -> String {
        if let explicit { return explicit }
        let path = System.directory(of: try System.executablePath()) + "/framerated"
        guard access(path, X_OK) == 0 else { throw BenchError("no framerated beside framebench (\(path)); build it or pass --framerated") }
        return path
    }

    /// Starts `binary` on a socket in a new temporary directory and waits until it answers
    /// a Health/Check (polling the socket every 200 µs).
    /// - Parameters:
    ///   - maxConnections, maxLinksPerConnection: limits passed on, so the load fits.
    ///   - timeout: seconds to wait for the first answer.
    static func spawn(
        binary: String, maxConnections: Int, maxLinksPerConnection: Int, extraArguments: [String] = [], timeout: Double = 10
    ) throws -> DaemonUnderTest {
        let directory = try System.makeTemporaryDirectory(prefix: "framebench")
        let socket = directory + "/framerated.sock"
        let arguments = [
            "--socket", socket, "--log-target", "stderr",
            "--max-connections", String(maxConnections), "--max-links-per-connection", String(maxLinksPerConnection),
        ] + extraArguments
        let start = System.monotonicNanoseconds()
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(binary, arguments, stderrPath: directory + "/framerated.log")
        } catch {
            System.removeDirectory(directory)
            throw error
        }
        let deadline = start + Int64(timeout * 1e9)
        while true {
            if let session = try? LineSession.connect(toPath: socket),
                let answer = try? session.call(.healthCheck, deadline: System.monotonicNanoseconds() + 1_000_000_000),
                case .success = answer.result
            {
                let elapsed = System.monotonicNanoseconds() - start
                return DaemonUnderTest(socketPath: socket, pid: child.pid, child: child, directory: directory, startupNanoseconds: elapsed)
            }
            if let status = child.wait(timeout: 0) {
                let log = System.readFile(directory + "/framerated.log") ?? ""
                System.removeDirectory(directory)
                throw BenchError("framerated exited (status \(status)) before answering:\n\(log)")
            }
            if System.monotonicNanoseconds() > deadline {
                child.stop(signal: SIGKILL)
                System.removeDirectory(directory)
                throw BenchError("framerated did not answer on \(socket) within \(timeout) s")
            }
            System.sleep(seconds: 0.0002)
        }
    }

    /// A daemon already serving `socketPath`; its pid is `pid` or, by default, the socket's peer credentials.
    static func attach(socketPath: String, pid: pid_t?) throws -> DaemonUnderTest {
        let session = try LineSession.connect(toPath: socketPath)
        guard let pid = pid ?? session.socket.peerProcessID else { throw BenchError("cannot read the daemon's pid from \(socketPath); pass --daemon-pid") }
        return DaemonUnderTest(socketPath: socketPath, pid: pid, child: nil, directory: nil, startupNanoseconds: nil)
    }

    /// The last lines of a spawned daemon's log (for errors).
    var logTail: String {
        guard let directory, let log = System.readFile(directory + "/framerated.log") else { return "" }
        return log.split(separator: "\n").suffix(20).joined(separator: "\n")
    }

    /// Stops a spawned daemon (SIGTERM, then SIGKILL after 5 s) and removes its directory; a
    /// daemon framebench did not start is left alone.
    func stop() {
        guard let child else { return }
        child.stop(signal: SIGTERM, grace: 5)
        if let directory { System.removeDirectory(directory) }
    }
}

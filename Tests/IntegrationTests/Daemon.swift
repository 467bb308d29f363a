import FrameRateClient
import FrameRateProtocol
import Foundation
import Testing

/// A real `framerated` process on a temporary socket.
final class Daemon: Sendable {
    let directory: URL
    let socket: String
    let process: TestProcess

    private init(directory: URL, socket: String, process: TestProcess) {
        self.directory = directory
        self.socket = socket
        self.process = process
    }

    /// Starts `framerated` and returns once its socket answers a health check.
    /// Readiness is the socket answering, never a fixed sleep.
    /// - Parameter socket: the socket to listen on (e.g. a stopped daemon's, to
    ///   restart it); its directory keeps the log. `nil`: a fresh temporary directory.
    static func start(_ arguments: [String] = [], socket: String? = nil) async throws -> Daemon {
        let directory = try socket.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? Paths.temporaryDirectory()
        let socket = socket ?? directory.appendingPathComponent("framerated.sock").path
        let log = FileManager.default.fileExists(atPath: directory.appendingPathComponent("framerated.log").path)
            ? "framerated-\(UUID().uuidString.prefix(6)).log" : "framerated.log"
        let process = try TestProcess(
            executable: Paths.framerated, arguments: ["--socket", socket, "--log-level", "debug"] + arguments,
            stderrURL: directory.appendingPathComponent(log)
        )
        let daemon = Daemon(directory: directory, socket: socket, process: process)
        try await daemon.waitUntilAnswering()
        return daemon
    }

    /// Polls the socket with a health check (backing off from 1 ms) until it answers SERVING.
    func waitUntilAnswering(timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        var backoff = Duration.milliseconds(1)
        while true {
            if let connection = try? await FrameRateConnection.connect(socketPath: socket) {
                let status = try? await connection.health()
                await connection.close()
                if status == "SERVING" { return }
            }
            guard process.isRunning else {
                Issue.record("framerated exited before answering: \(process.stderr)")
                throw DaemonError.exited
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("framerated did not answer within \(timeout): \(process.stderr)")
                throw DaemonError.notAnswering
            }
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .milliseconds(50))
        }
    }

    func connect() async throws -> FrameRateConnection {
        try await FrameRateConnection.connect(socketPath: socket)
    }

    /// Sends SIGTERM and returns the exit status.
    func stop() async -> Int32 {
        process.signal(SIGTERM)
        return await process.waitForExit()
    }

    /// Kills the daemon at once (end of a test; `defer` cannot await).
    func kill() { process.signal(SIGKILL) }

    /// The daemon's log so far.
    var log: String { process.stderr }

    /// Whether the log shows `text` within `timeout` (polled: the daemon may log a moment
    /// after the reply that the test saw).
    func logShows(_ text: String, within timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !log.contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Spawns the raw-socket Python client in `mode` against this daemon.
    func rawClient(_ mode: String, _ arguments: [String]) throws -> TestProcess {
        try TestProcess(
            executable: "/usr/bin/env", arguments: ["python3", Paths.rawClient, mode, "--socket", socket] + arguments,
            stderrURL: directory.appendingPathComponent("client-\(UUID().uuidString.prefix(6)).log")
        )
    }

    /// Runs `framectl` against this daemon to completion.
    func framectl(_ arguments: [String], user: String? = nil) async throws -> (status: Int32, stdout: [String], stderr: String) {
        let command = [Paths.framectl] + arguments + ["--socket", socket]
        let (executable, argv) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--"] + command) } ?? (command[0], Array(command.dropFirst()))
        let process = try TestProcess(
            executable: executable, arguments: argv,
            stderrURL: directory.appendingPathComponent("framectl-\(UUID().uuidString.prefix(6)).log")
        )
        let status = await process.waitForExit()
        return (status, process.output, process.stderr)
    }

    enum DaemonError: Error { case exited, notAnswering }
}

extension FrameRateConnection {
    /// Polls GetState until `condition` holds (each poll is one round trip), or fails after `timeout`.
    func waitForState(
        timeout: Duration = .seconds(5), _ condition: (CompositorState) -> Bool
    ) async throws -> CompositorState {
        let deadline = ContinuousClock.now + timeout
        while true {
            let state = try await self.state()
            if condition(state) { return state }
            guard ContinuousClock.now < deadline else {
                Issue.record("state never matched; last: \(state)")
                return state
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

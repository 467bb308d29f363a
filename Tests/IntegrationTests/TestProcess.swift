import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the built executables and test scripts are.
enum Paths {
    /// The package root, from this file's location.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `$FRAMERATED_BIN_DIR` (set by `make test`), else `.build/debug`.
    static let binaries: URL = {
        if let directory = ProcessInfo.processInfo.environment["FRAMERATED_BIN_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory)
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }()

    static var framerated: String { binaries.appendingPathComponent("framerated").path }
    static var framectl: String { binaries.appendingPathComponent("framectl").path }
    static var rawClient: String { packageRoot.appendingPathComponent("Tests/IntegrationTests/Scripts/raw_client.py").path }

    /// A fresh directory for one test's socket and logs.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("framerated-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A child process started with `posix_spawn`: standard output read line by line
/// (or sent to a file), standard error in a file, standard input `/dev/null`, no
/// other descriptor inherited.
///
/// Not Foundation's `Process`: it learns of a child's exit through a descriptor the
/// child's own children inherit, so a child that starts daemons could keep a test
/// waiting forever. Here a thread blocks in `waitid` for this pid alone, and
/// another reads the output pipe, so exit and output are independent.
final class TestProcess: Sendable {
    /// Where the child's standard output goes.
    enum Output {
        /// A pipe read by the test, line by line.
        case lines
        /// A file, with standard error too.
        case file(String)
    }

    private struct State {
        var output: [UInt8] = []
        var outputEnded = false
        var status: Int32?
        var lineWaiters: [(predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = []
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []

        var lines: [String] {
            var parts = String(decoding: output, as: UTF8.self).components(separatedBy: "\n")
            parts.removeLast()  // incomplete (or empty) tail
            return parts
        }
    }

    /// The child's pid.
    let pid: pid_t
    let stderrURL: URL
    private let state = Mutex(State())

    init(executable: String, arguments: [String], stderrURL: URL, output: Output = .lines) throws {
        self.stderrURL = stderrURL
        var pipeDescriptors: [Int32] = [-1, -1]
        if case .lines = output {
            guard pipe(&pipeDescriptors) == 0 else { throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))") }
        }
        let argv = [executable] + arguments
        let spawned: pid_t
        do {
            spawned = try Self.spawn(argv, stdoutPipe: pipeDescriptors[1], output: output, stderr: stderrURL.path)
        } catch {
            for descriptor in pipeDescriptors where descriptor >= 0 { close(descriptor) }
            throw error
        }
        pid = spawned
        if case .lines = output {
            close(pipeDescriptors[1])
            let readEnd = pipeDescriptors[0]
            Thread { [self] in readOutput(readEnd) }.start()
        } else {
            state.withLock { $0.outputEnded = true }
        }
        Thread { [self] in reap() }.start()
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    private static func spawn(_ argv: [String], stdoutPipe: Int32, output: Output, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        switch output {
        case .lines:
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe, 1)
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else the test process has open reaches the child.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, argv[0], &actions, &attributes, arguments, environ)
        guard result == 0 else { throw SpawnError(description: "posix_spawn \(argv[0]): \(String(cString: strerror(result)))") }
        return pid
    }

    private func readOutput(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            let ended = count <= 0
            let ready = state.withLock { state -> [(CheckedContinuation<String?, Never>, String?)] in
                if ended { state.outputEnded = true } else { state.output += buffer[..<count] }
                return Self.satisfiedLineWaiters(&state)
            }
            for (continuation, line) in ready { continuation.resume(returning: line) }
            if ended { break }
        }
        close(descriptor)
    }

    private static func satisfiedLineWaiters(_ state: inout State) -> [(CheckedContinuation<String?, Never>, String?)] {
        var ready: [(CheckedContinuation<String?, Never>, String?)] = []
        let lines = state.lines
        let ended = state.outputEnded
        state.lineWaiters.removeAll { waiter in
            if let line = lines.first(where: waiter.predicate) {
                ready.append((waiter.continuation, line))
                return true
            }
            if ended {
                ready.append((waiter.continuation, nil))
                return true
            }
            return false
        }
        return ready
    }

    /// Waits for this pid to exit, marks it exited (so no signal can reach a reused pid), then reaps it.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        var raw: Int32 = 0
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            let signal = raw & 0x7f
            state.status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        let status = state.withLock { $0.status! }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// Whether the process is still running.
    var isRunning: Bool { state.withLock { $0.status == nil } }

    /// Every complete line printed so far.
    var output: [String] { state.withLock { $0.lines } }

    /// Waits until a printed line matches `predicate` (or output ends: `nil`).
    func firstLine(where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (String?, Bool) in
                if let line = state.lines.first(where: predicate) { return (line, true) }
                if state.outputEnded { return (nil, true) }
                state.lineWaiters.append((predicate, continuation))
                return (nil, false)
            }
            if ready.1 { continuation.resume(returning: ready.0) }
        }
    }

    /// The exit status (128 + N for signal N), once the process has exited.
    func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Int32? in
                if let status = state.status { return status }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Waits for the process to exit and its output to end. If `timeout` passes first,
    /// it gets SIGTERM (so it can clean up), and SIGKILL `grace` later.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(30), grace: Duration = .seconds(10)) async -> Int32 {
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.exitStatus() }
            group.addTask {
                // Only a guard against a hung child.
                guard (try? await Task.sleep(for: timeout)) != nil else { return nil }
                self.signal(SIGTERM)
                if (try? await Task.sleep(for: grace)) != nil { self.signal(SIGKILL) }
                return nil
            }
            var status: Int32 = -1
            for await result in group {
                if let result {
                    status = result
                    group.cancelAll()
                }
            }
            return status
        }
        // Let the output drain so `output` is complete (a grandchild may hold the pipe: bounded wait).
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await self.firstLine { _ in false } }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
            self.endLineWaiters()
        }
        return status
    }

    /// Resumes every waiter for a line with `nil` (used when giving up on the output).
    private func endLineWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<String?, Never>] in
            defer { state.lineWaiters = [] }
            return state.lineWaiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// Sends `signal`, unless the process has already exited (its pid may be reused).
    func signal(_ signal: Int32) {
        state.withLock { state in
            if state.status == nil { _ = kill(pid, signal) }
        }
    }

    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }
}

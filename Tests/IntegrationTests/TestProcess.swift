import Dispatch
import Foundation

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

/// A child process with its standard output read line by line and standard error kept in a file.
final class TestProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` and `output` are only mutated under `lock`
    // (`output` from the pipe reader, `process` only before `launch` returns).
    let process = Process()
    private let stdoutPipe = Pipe()
    private let lock = NSLock()
    private var outputBuffer = Data()
    private var lineWaiters: [(predicate: (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = []
    private var ended = false
    private var exited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []
    let stderrURL: URL

    init(executable: String, arguments: [String], stderrURL: URL) throws {
        self.stderrURL = stderrURL
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = stdoutPipe
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = FileHandle.nullDevice
        stdoutPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.append(data)
        }
        process.terminationHandler = { [weak self] _ in self?.markExited() }
        try process.run()
    }

    private func markExited() {
        lock.lock()
        exited = true
        let waiters = exitWaiters
        exitWaiters = []
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the process has exited.
    func exit() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if exited {
                lock.unlock()
                continuation.resume()
            } else {
                exitWaiters.append(continuation)
                lock.unlock()
            }
        }
    }

    private func append(_ data: Data) {
        let waiters: [(CheckedContinuation<String?, Never>, String?)]
        lock.lock()
        if data.isEmpty {
            ended = true
            stdoutPipe.fileHandleForReading.readabilityHandler = nil
        } else {
            outputBuffer.append(data)
        }
        var ready: [(CheckedContinuation<String?, Never>, String?)] = []
        lineWaiters.removeAll { waiter in
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
        waiters = ready
        lock.unlock()
        for (continuation, line) in waiters { continuation.resume(returning: line) }
    }

    /// Complete lines printed so far.
    var lines: [String] {
        let text = String(decoding: outputBuffer, as: UTF8.self)
        var parts = text.components(separatedBy: "\n")
        parts.removeLast()  // incomplete (or empty) tail
        return parts
    }

    /// Every complete line printed so far.
    var output: [String] { lock.withLock { lines } }

    /// Waits until a printed line matches `predicate` (or output ends: `nil`).
    func firstLine(where predicate: @escaping (String) -> Bool) async -> String? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let line = lines.first(where: predicate) {
                lock.unlock()
                continuation.resume(returning: line)
            } else if ended {
                lock.unlock()
                continuation.resume(returning: nil)
            } else {
                lineWaiters.append((predicate, continuation))
                lock.unlock()
            }
        }
    }

    /// Waits for the process to exit, at most `timeout`; kills it after that.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32 {
        let pid = process.processIdentifier
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.exit() }
            group.addTask {
                // Only a guard against a hung child: kill it once the timeout passes.
                if (try? await Task.sleep(for: timeout)) != nil { kill(pid, SIGKILL) }
            }
            await group.next()
            group.cancelAll()
            await group.waitForAll()
        }
        await exit()
        // Let the pipe drain so `output` is complete.
        _ = await firstLine { _ in false }
        return process.terminationStatus
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }
}

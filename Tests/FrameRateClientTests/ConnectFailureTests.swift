import FrameRateProtocol
import NIOCore
import Testing

@testable import FrameRateClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A fresh directory under /tmp, removed by the caller.
private func temporaryDirectory() throws -> String {
    var template = Array("/tmp/framerated-client-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    try #require(made != nil)
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func removeTree(_ path: String) {
    if let directory = opendir(path) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink(path + "/" + name) }
        }
        closedir(directory)
    }
    rmdir(path)
}

@Suite("connect failures tell a person what to do")
struct ConnectFailureTests {
    /// A socket named explicitly.
    static let target = SocketDiscovery(path: "/s", source: .option)

    @Test("no socket at the path: daemon not running, naming the path and how to start it")
    func missingPath() async throws {
        let directory = try temporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/framerated.sock"
        do {
            let connection = try await FrameRateConnection.connect(socketPath: path)
            await connection.close()
            Issue.record("connected to a missing socket")
        } catch {
            #expect(error == .daemonNotRunning(SocketDiscovery(path: path, source: .option)))
            #expect(error.status == .unavailable)
            #expect(error.description.contains("nothing is listening on \(path) (the socket asked for)"))
            #expect(error.description.contains("`framerated --socket \(path)`"))
            // Only that path was tried, so the advice is about that path, not the system daemon.
            #expect(!error.description.contains("systemctl"))
        }
    }

    @Test("the directory of the path does not exist either")
    func missingDirectory() async {
        let path = "/tmp/framerated-nonexistent-\(getpid())/x.sock"
        await #expect(throws: FrameRateClientError.daemonNotRunning(SocketDiscovery(path: path, source: .option))) {
            _ = try await FrameRateConnection.connect(socketPath: path)
        }
    }

    @Test("a regular file at the path: says it is not a socket, not that the daemon is down")
    func regularFile() async throws {
        let directory = try temporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/not-a-socket"
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o644)
        try #require(descriptor >= 0)
        close(descriptor)
        do {
            let connection = try await FrameRateConnection.connect(socketPath: path)
            await connection.close()
            Issue.record("connected to a regular file")
        } catch {
            #expect(error == .connectionFailed(path: path, reason: "the path exists but is a regular file, not a socket"))
            #expect(error.description.hasPrefix("cannot connect to \(path): the path exists but is a regular file, not a socket."))
            #expect(error.description.contains("--socket PATH"))
        }
    }

    @Test("a directory at the path")
    func directoryPath() async throws {
        let directory = try temporaryDirectory()
        defer { removeTree(directory) }
        await #expect(throws: FrameRateClientError.connectionFailed(path: directory, reason: "the path exists but is a directory, not a socket")) {
            _ = try await FrameRateConnection.connect(socketPath: directory)
        }
    }

    @Test("a path too long for a Unix socket")
    func pathTooLong() async {
        let path = "/tmp/" + String(repeating: "x", count: 120) + ".sock"
        await #expect(throws: FrameRateClientError.connectionFailed(path: path, reason: "the path is too long for a Unix socket (at most 107 bytes)")) {
            _ = try await FrameRateConnection.connect(socketPath: path)
        }
    }

    @Test(
        "errno mapping",
        arguments: [
            (ENOENT, ConnectFailure.PathKind.missing, FrameRateClientError.daemonNotRunning(ConnectFailureTests.target)),
            (ECONNREFUSED, .missing, .daemonNotRunning(ConnectFailureTests.target)),
            (ECONNREFUSED, .socket, .daemonNotRunning(ConnectFailureTests.target)),
            (ECONNREFUSED, .other("a regular file"), .connectionFailed(path: "/s", reason: "the path exists but is a regular file, not a socket")),
            (EACCES, .socket, .permissionDenied(path: "/s")),
            (EPERM, .socket, .permissionDenied(path: "/s")),
            (ENOTSOCK, .other("a regular file"), .connectionFailed(path: "/s", reason: "the path exists but is not a socket")),
            (ENOTDIR, .missing, .connectionFailed(path: "/s", reason: String(cString: strerror(ENOTDIR)))),
        ] as [(Int32, ConnectFailure.PathKind, FrameRateClientError)]
    )
    func errnoMapping(errno: Int32, kind: ConnectFailure.PathKind, expected: FrameRateClientError) {
        #expect(ConnectFailure.map(errno: errno, target: Self.target, kind: kind) == expected)
        if kind == .missing {
            // Through the IOError NIO throws, for a path with nothing at it.
            let missing = SocketDiscovery(path: "/nonexistent/\(errno).sock", source: .option)
            #expect(ConnectFailure.map(IOError(errnoCode: errno, reason: "connect"), target: missing).status == expected.status)
        }
    }

    @Test("permission denied names the path and what to do")
    func permissionDeniedText() {
        let error = ConnectFailure.map(errno: EACCES, target: SocketDiscovery(path: "/run/framerated.sock", source: .option), kind: .socket)
        #expect(error.status == .permissionDenied)
        #expect(error.description.hasPrefix("permission denied connecting to /run/framerated.sock: "))
        #expect(error.description.contains("framerated --socket PATH"))
    }

    @Test("what is at a path")
    func pathKinds() throws {
        #expect(ConnectFailure.pathKind("/nonexistent/x") == .missing)
        #expect(ConnectFailure.pathKind("/tmp") == .other("a directory"))
        #expect(ConnectFailure.pathKind("/dev/null") == .other("a device"))
    }

    /// Mode 000 only stops a user who is not root; run as root, the case is covered
    /// by the errno mapping above.
    @Test("a socket this user may not open: permission denied", .disabled(if: geteuid() == 0, "root ignores the socket's mode"))
    func unreadableSocket() async throws {
        let directory = try temporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/framerated.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        try #require(listen(listener, 1) == 0)
        try #require(chmod(path, 0) == 0)
        await #expect(throws: FrameRateClientError.permissionDenied(path: path)) {
            _ = try await FrameRateConnection.connect(socketPath: path)
        }
    }
}

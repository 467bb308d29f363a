import FrameRateProtocol
import NIOCore
import Testing

@testable import FrameRateClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("the client checks who answers on the socket")
struct DaemonTrustTests {
    @Test("root, the framerated user and the caller are trusted; nobody else")
    func decision() {
        let withService = DaemonTrust(ownUserID: 1000, serviceUserID: 999)
        #expect(withService.trusts(0) && withService.trusts(1000) && withService.trusts(999))
        #expect(!withService.trusts(1001) && !withService.trusts(65534) && !withService.trusts(UInt32.max))
        let withoutService = DaemonTrust(ownUserID: 1000, serviceUserID: nil)
        #expect(withoutService.trusts(0) && withoutService.trusts(1000))
        #expect(!withoutService.trusts(999) && !withoutService.trusts(65534))
        let root = DaemonTrust(ownUserID: 0, serviceUserID: nil)
        #expect(root.trusts(0) && !root.trusts(1000))
    }

    @Test("the service user is resolved by name; an absent user is nil")
    func serviceUser() {
        #expect(DaemonTrust.userID(named: "root") == 0)
        #expect(DaemonTrust.userID(named: "no-such-user-framerated-test") == nil)
        #expect(DaemonTrust.current().ownUserID == geteuid())
        #expect(DaemonTrust.current().serviceUserID == DaemonTrust.userID(named: "framerated"))
    }

    @Test("a refusal becomes an error naming the path and the uid found")
    func refusalText() {
        let target = SocketDiscovery(path: "/run/user/1000/framerated.sock", source: .perUser)
        let error = ConnectFailure.map(DaemonTrust.Refusal.untrusted(uid: 65534), target: target)
        #expect(error == .untrustedDaemon(path: "/run/user/1000/framerated.sock", uid: 65534))
        #expect(error.status == .permissionDenied)
        #expect(
            error.description.hasPrefix(
                "refusing the daemon at /run/user/1000/framerated.sock: the process listening there runs as uid 65534, "
                    + "which is neither root, the framerated service user nor you"
            )
        )
        let unreadable = ConnectFailure.map(DaemonTrust.Refusal.credentialsUnreadable("EBADF"), target: target)
        #expect(unreadable == .connectionFailed(path: target.path, reason: "cannot tell who is listening (SO_PEERCRED: EBADF), so it is not trusted"))
    }

    @Test("not running: the advice lists exactly the paths tried")
    func notRunningText() {
        let system = SocketPath.system
        let both = FrameRateClientError.daemonNotRunning(SocketDiscovery(path: system, source: .system(perUserCandidate: "/run/user/7/framerated.sock")))
        #expect(
            both.description.hasPrefix(
                "framerated is not running: tried /run/user/7/framerated.sock (no socket there: no per-user daemon) "
                    + "and \(system) (nothing listening: no system daemon). Start the system daemon with `systemctl start framerated.socket`"
            )
        )
        let systemOnly = FrameRateClientError.daemonNotRunning(SocketDiscovery(path: system, source: .system(perUserCandidate: nil)))
        #expect(systemOnly.description.hasPrefix("framerated is not running: tried \(system) (nothing listening: no system daemon; XDG_RUNTIME_DIR is not set"))
        let perUser = FrameRateClientError.daemonNotRunning(SocketDiscovery(path: "/run/user/7/framerated.sock", source: .perUser))
        #expect(perUser.description.hasPrefix("framerated is not running: nothing is listening on /run/user/7/framerated.sock, your per-user daemon's socket"))
        #expect(!perUser.description.contains("systemctl"))
        let environment = FrameRateClientError.daemonNotRunning(SocketDiscovery(path: "/x.sock", source: .environment))
        #expect(environment.description.contains("/x.sock (from $FRAMERATED_SOCKET)") && environment.description.contains("unset FRAMERATED_SOCKET"))
        for error in [both, systemOnly, perUser, environment] {
            #expect(!error.description.contains("/tmp"))
            #expect(error.status == .unavailable)
        }
    }

    @Test("a listener of this process's own user is trusted: the connect goes through")
    func ownListener() async throws {
        let directory = try makeDirectory()
        defer { removeDirectory(directory) }
        let path = directory + "/framerated.sock"
        let listener = try listenUnix(path)
        defer { close(listener) }
        let connection = try await FrameRateConnection.connect(socketPath: path)
        #expect(connection.socketPath == path)
        await connection.close()
    }

    /// Tests run as root, so a listener can be started as uid 65534 (`setpriv`).
    @Test("a listener of another user is refused, naming its uid and the path", .enabled(if: geteuid() == 0, "needs root to run a listener as another user"))
    func otherUsersListener() async throws {
        let directory = try makeDirectory()
        defer { removeDirectory(directory) }
        try #require(chown(directory, 65534, 65534) == 0)
        let path = directory + "/framerated.sock"
        let fake = try FakeListener(path: path, uid: 65534)
        defer { fake.stop() }
        await #expect(throws: FrameRateClientError.untrustedDaemon(path: path, uid: 65534)) {
            _ = try await FrameRateConnection.connect(socketPath: path)
        }
    }
}

/// A Unix socket listening at `path`, as a raw descriptor.
private func listenUnix(_ path: String) throws -> Int32 {
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    try #require(listener >= 0)
    // The project's one sockaddr_un builder (nil only for a path too long).
    let bound = UnixSocketAddress.withAddress(of: path) { bind(listener, $0, $1) }
    try #require(bound == 0 && listen(listener, 4) == 0)
    return listener
}

private func makeDirectory() throws -> String {
    var template = Array("/tmp/framerated-trust-XXXXXX".utf8CString)
    try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } != nil)
    let directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    try #require(chmod(directory, 0o755) == 0)
    return directory
}

private func removeDirectory(_ directory: String) {
    unlink(directory + "/framerated.sock")
    rmdir(directory)
}

/// A process listening on a Unix socket as another user: `setpriv --reuid UID python3`,
/// which binds, prints `ready` (read here: no sleeping for readiness) and waits.
private struct FakeListener {
    let pid: pid_t

    static let script = """
        import socket, sys, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1])
        s.listen(4)
        print("ready", flush=True)
        time.sleep(120)
        """

    init(path: String, uid: UInt32) throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        let arguments = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/python3", "-c", Self.script, path]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(ends[1])
        try #require(status == 0, "posix_spawn setpriv: \(String(cString: strerror(status)))")
        self.pid = pid
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(ends[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        if String(decoding: line, as: UTF8.self) != "ready" {
            stop()
            Issue.record("the listener run as uid \(uid) did not start")
            throw CancellationError()
        }
    }

    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}

import FrameRateProtocol
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("finding the daemon's socket")
struct SocketPathTests {
    static let system = "/run/framerated/framerated.sock"

    @Test("a client: explicit, then $FRAMERATED_SOCKET, then the per-user socket if it exists, then the system one")
    func discoveryOrder() {
        let everything = ["FRAMERATED_SOCKET": "/x/env.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        let always: (String) -> Bool = { _ in true }
        let never: (String) -> Bool = { _ in false }
        #expect(SocketPath.discover(explicit: "/e.sock", environment: everything, isSocket: always) == SocketDiscovery(path: "/e.sock", source: .option))
        #expect(SocketPath.discover(explicit: "", environment: everything, isSocket: always) == SocketDiscovery(path: "/x/env.sock", source: .environment))
        let perUser = ["XDG_RUNTIME_DIR": "/run/user/1000", "FRAMERATED_SOCKET": ""]
        #expect(
            SocketPath.discover(environment: perUser, isSocket: always)
                == SocketDiscovery(path: "/run/user/1000/framerated.sock", source: .perUser)
        )
        #expect(
            SocketPath.discover(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"], isSocket: always).path == "/run/user/1000/framerated.sock"
        )
        let fallback = SocketPath.discover(environment: perUser, isSocket: never)
        #expect(fallback == SocketDiscovery(path: Self.system, source: .system(perUserCandidate: "/run/user/1000/framerated.sock")))
        #expect(fallback.pathsTried == ["/run/user/1000/framerated.sock", Self.system])
        // No runtime directory (root's usual case, `runuser -u nobody`): the system daemon, with nothing else looked at.
        for environment in [[:], ["XDG_RUNTIME_DIR": ""]] as [[String: String]] {
            let system = SocketPath.discover(environment: environment, isSocket: always)
            #expect(system == SocketDiscovery(path: Self.system, source: .system(perUserCandidate: nil)))
            #expect(system.pathsTried == [Self.system])
        }
    }

    @Test("the per-user socket is looked at on disk: a real socket counts, a file or nothing does not")
    func discoveryOnDisk() throws {
        var template = Array("/tmp/framerated-xdg-XXXXXX".utf8CString)
        try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } != nil)
        let directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let path = directory + "/framerated.sock"
        defer {
            unlink(path)
            rmdir(directory)
        }
        let environment = ["XDG_RUNTIME_DIR": directory]
        #expect(SocketPath.discover(environment: environment).source == .system(perUserCandidate: path))
        let file = open(path, O_CREAT | O_WRONLY, 0o600)
        try #require(file >= 0)
        close(file)
        #expect(!SocketPath.isSocket(at: path))
        #expect(SocketPath.discover(environment: environment).path == Self.system)
        unlink(path)
        let listener = try bindUnixSocket(path)
        defer { close(listener) }
        #expect(SocketPath.isSocket(at: path))
        #expect(SocketPath.discover(environment: environment) == SocketDiscovery(path: path, source: .perUser))
    }

    @Test("a daemon: explicit, $FRAMERATED_SOCKET, the system path for root, the per-user path, else no default")
    func listenPath() throws {
        #expect(try SocketPath.listenPath(explicit: "/e.sock", environment: [:], userID: 1000) == "/e.sock")
        #expect(try SocketPath.listenPath(explicit: nil, environment: ["FRAMERATED_SOCKET": "/x.sock"], userID: 1000) == "/x.sock")
        #expect(try SocketPath.listenPath(explicit: "", environment: ["XDG_RUNTIME_DIR": "/run/user/0"], userID: 0) == Self.system)
        #expect(try SocketPath.listenPath(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], userID: 1000) == "/run/user/1000/framerated.sock")
        for environment in [[:], ["XDG_RUNTIME_DIR": "", "FRAMERATED_SOCKET": ""]] as [[String: String]] {
            #expect(throws: SocketPath.NoListenPath(userID: 65534)) {
                try SocketPath.listenPath(explicit: nil, environment: environment, userID: 65534)
            }
        }
        let text = SocketPath.NoListenPath(userID: 65534).description
        #expect(text.hasPrefix("no socket path: uid 65534 is not root and XDG_RUNTIME_DIR is not set"))
        #expect(text.contains("Pass --socket PATH") && text.contains("set XDG_RUNTIME_DIR"))
        #expect(!text.contains("/tmp"))
    }

    @Test("SO_PEERCRED of a socketpair is this process; of a non-socket, nothing")
    func peerCredentials() throws {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach { close($0) } }
        let credentials = try #require(KernelPeerCredentials.read(descriptor: ends[0]))
        #expect(credentials == KernelPeerCredentials(pid: getpid(), uid: geteuid(), gid: getegid()))
        var pipeEnds: [Int32] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach { close($0) } }
        #expect(KernelPeerCredentials.read(descriptor: pipeEnds[0]) == nil)
    }
}

/// A Unix socket listening on `path`.
func bindUnixSocket(_ path: String) throws -> Int32 {
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    try #require(listener >= 0)
    // The project's one sockaddr_un builder (nil only for a path too long).
    let bound = UnixSocketAddress.withAddress(of: path) { bind(listener, $0, $1) }
    try #require(bound == 0 && listen(listener, 4) == 0)
    return listener
}

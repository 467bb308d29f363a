#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import FrameRateProtocol
import NIOCore

/// A blocking JSON-RPC client on one Unix-socket connection, for control-plane
/// probes: one request at a time, timed with `CLOCK_MONOTONIC`. Notifications
/// (ticks of its own links) that arrive while waiting for a response are skipped.
final class ControlClient {
    private let fd: Int32
    private var received: [UInt8] = []
    private var nextID = 1

    /// Connects to `path`.
    /// - Throws: when the daemon is not listening (yet).
    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError.errno("socket") }
        guard let result = UnixSocketAddress.withAddress(of: path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw BenchError("socket path too long: \(path)")
        }
        guard result == 0 else {
            let error = BenchError.errno("connect \(path)")
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// The pid of the process that listens on the socket (`SO_PEERCRED`).
    var peerPID: pid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides it behind _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else { return nil }
        return credentials.pid
    }

    /// Sends one request and waits for its response.
    /// - Returns: the result, and the round trip in nanoseconds (write to the end of the response line).
    func call(_ method: V1Method, params: JSONValue? = nil, timeout: Double = 5) throws -> (result: Result<JSONValue, RPCError>, nanoseconds: Int64) {
        let id = nextID
        nextID += 1
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        JSONRPCOutboundMessage.request(id: .number(JSONNumber(id)), method: method.rawValue, params: params).writeLine(into: &buffer)
        let request = Array(buffer.readableBytesView)
        let start = System.monotonicNanoseconds()
        try send(request)
        let deadline = start + Int64(timeout * 1e9)
        while true {
            let line = try readLine(deadline: deadline)
            // Ticks for this connection's own links are not what we wait for.
            if line.count > 40 && line.withUnsafeBytes({ TickLineScanner.looksLikeTick($0) }) { continue }
            let end = System.monotonicNanoseconds()
            guard case .single(.response(let responseID, let result)) = try JSONRPCClientInbound.parse(line: line) else { continue }
            guard responseID == .number(JSONNumber(id)) else { continue }
            return (result, end - start)
        }
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw BenchError.errno("send")
            }
            offset += written
        }
    }

    private func readLine(deadline: Int64) throws -> [UInt8] {
        var searched = 0
        while true {
            if let newline = received[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(received[..<newline])
                received.removeSubrange(...newline)
                return line
            }
            searched = received.count
            let remaining = deadline - System.monotonicNanoseconds()
            guard remaining > 0 else { throw BenchError("no response within the timeout") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining / 1_000_000 + 1, 60_000)))
            if ready < 0 && errno != EINTR { throw BenchError.errno("poll") }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw BenchError.errno("recv")
            }
            guard count > 0 else { throw BenchError("the daemon closed the connection") }
            received += chunk[0..<count]
        }
    }
}

extension V1Method {
    /// Register params for the benchmark's links.
    static func registerParams(_ range: FrameRateRange, highFrameRate: Bool, paused: Bool = false, label: String? = nil) -> JSONValue {
        RegisterRequest(range: range, paused: paused, label: label, highFrameRate: highFrameRate).jsonValue
    }
}

package import FrameRateProtocol
import FrameRatePosix
package import NIOCore
package import NIOEmbedded

/// One connection to a ``ServerHarness``: write lines in, read lines out.
///
/// A helper that finds the daemon answering otherwise than a test expects (no reply,
/// two replies, a partial line, an error for a result) throws ``TestFailure``, which
/// fails the test where it is called.
package struct TestClient {
    /// Keeps the harness (and so the loop and the core) alive while the client is used.
    package let server: ServerHarness
    package let channel: EmbeddedChannel
    /// The client's end of a real socket pair, when the daemon writes to a socket.
    package var peerDescriptor: Int32? = nil
    package var loop: EmbeddedEventLoop { server.loop }

    /// Reads whatever the socket holds now (never blocks).
    private func readSocket(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while let count = chunk.withUnsafeMutableBytes({ SystemCall.read(descriptor, into: $0) }), count > 0 {
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes raw bytes as if the peer had sent them.
    package func sendBytes(_ text: String) throws {
        try sendBytes(channel.allocator.buffer(string: text))
    }

    /// Writes raw bytes as if the peer had sent them.
    package func sendBytes(_ buffer: ByteBuffer) throws {
        try channel.writeInbound(buffer)
        loop.run()
    }

    /// Sends one line (a `\n` is appended).
    package func send(_ line: String) throws { try sendBytes(line + "\n") }

    /// Every line written to the peer since the last read, in order, without their `\n`.
    /// Each must end with `\n`: the daemon never writes a partial line.
    package func lines(file: StaticString = #fileID, line: UInt = #line) throws -> [String] {
        if let peerDescriptor {
            let text = readSocket(peerDescriptor)
            guard text.isEmpty || text.hasSuffix("\n") else {
                throw TestFailure("the daemon writes whole lines: \(text.suffix(200))", file: file, line: line)
            }
            return text.split(separator: "\n").map(String.init)
        }
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            let text = String(buffer: buffer)
            if text.isEmpty { continue }  // shutdown flushes an empty buffer to connections without links
            guard text.hasSuffix("\n") else { throw TestFailure("every write ends a line: \(text)", file: file, line: line) }
            lines += text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        return lines
    }

    /// Lines written since the last read, without ticks.
    package func nonTickLines(file: StaticString = #fileID, line: UInt = #line) throws -> [String] {
        try lines(file: file, line: line).filter { !$0.hasPrefix(#"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","#) }
    }

    /// Sends `line` and returns the one line answering it (other lines are a test failure).
    package func call(_ line: String, file: StaticString = #fileID, line number: UInt = #line) throws -> String {
        try send(line)
        let replies = try nonTickLines(file: file, line: number)
        guard replies.count == 1, let reply = replies.first else {
            throw TestFailure("expected one reply to \(line), got \(replies)", file: file, line: number)
        }
        return reply
    }

    /// Sends a request `{"jsonrpc":"2.0","id":id,"method":method,"params":params}` and returns the reply.
    package func request(_ method: V1Method, _ params: String? = nil, id: Int = 1, file: StaticString = #fileID, line: UInt = #line) throws -> String {
        try call(requestLine(method.rawValue, params, id: id), file: file, line: line)
    }

    /// Sends a request and returns its parsed `result`; an error reply is a test failure.
    package func result(_ method: V1Method, _ params: String? = nil, file: StaticString = #fileID, line: UInt = #line) throws -> JSONValue {
        let reply = try request(method, params, file: file, line: line)
        guard case .single(.response(_, .success(let result))) = try JSONRPCClientInbound.parse(line: reply) else {
            throw TestFailure("expected a result, got \(reply)", file: file, line: line)
        }
        return result
    }

    /// Sends a request and returns its parsed error; a result is a test failure.
    package func error(_ method: String, _ params: String? = nil, file: StaticString = #fileID, line: UInt = #line) throws -> RPCError {
        let reply = try call(requestLine(method, params, id: 1), file: file, line: line)
        guard case .single(.response(_, .failure(let error))) = try JSONRPCClientInbound.parse(line: reply) else {
            throw TestFailure("expected an error, got \(reply)", file: file, line: line)
        }
        return error
    }

    package func error(_ method: V1Method, _ params: String? = nil, file: StaticString = #fileID, line: UInt = #line) throws -> RPCError {
        try error(method.rawValue, params, file: file, line: line)
    }

    /// Registers a link and returns its id.
    package func register(_ minimum: Double, _ maximum: Double, _ preferred: Double = 0, extra: String = "", file: StaticString = #fileID, line: UInt = #line) throws -> UInt64 {
        let params = #"{"range":{"minimum":\#(minimum),"maximum":\#(maximum),"preferred":\#(preferred)}\#(extra)}"#
        let result = try result(.register, params, file: file, line: line)
        guard let link = result["link"]?.int64Value, link >= 1 else {
            throw TestFailure("no link id in \(result.jsonString)", file: file, line: line)
        }
        return UInt64(link)
    }

    /// Closes the connection as a peer hang-up would.
    package func close() {
        channel.pipeline.close(promise: nil)
        loop.run()
    }
}

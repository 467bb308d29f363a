#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import NIOCore

/// Splits a byte stream into newline-delimited JSON lines, for `ByteToMessageHandler`
/// (or `NIOSingleStepByteToMessageProcessor`).
///
/// - Lines end at `\n`; one `\r` before it is stripped, so `\r\n` works too.
/// - Empty lines and lines of only JSON whitespace (space, tab, `\r`) are skipped silently:
///   they carry no message, and JSON-RPC has nothing to answer them with.
/// - A line longer than ``maximumLineLength`` bytes (not counting its `\n` or `\r\n`) is
///   reported as ``NDJSONFrame/oversized(limit:)``. It is detected as soon as more bytes than
///   that are buffered without a newline, so at most `maximumLineLength + 1` bytes are ever
///   held; the rest of the oversized line is then discarded as it arrives, and decoding
///   resumes after its newline (the server is expected to close the connection anyway).
/// - When decoding ends (EOF, or the handler being removed), a final line without `\n` is
///   delivered like any other line; the remains of an oversized line are dropped.
///
/// Newlines are found with `firstIndex(of:)` over the readable bytes, starting where the
/// previous search stopped, so a line trickling in byte by byte costs linear time overall.
public struct NDJSONLineDecoder: NIOSingleStepByteToMessageDecoder, Sendable {
    /// Each decoded frame.
    public typealias InboundOut = NDJSONFrame

    /// The default ``maximumLineLength``: 1 MiB (1,048,576 bytes).
    public static let defaultMaximumLineLength = 1_048_576

    /// The longest accepted line, in bytes, excluding the line terminator.
    public let maximumLineLength: Int

    /// How many readable bytes (from the reader index) are known to contain no `\n`.
    private var searchedBytes = 0
    /// Whether the remainder of an oversized line is being discarded.
    private var discardingOversizedLine = false

    /// Creates a decoder.
    /// - Parameter maximumLineLength: the longest accepted line; must be positive.
    public init(maximumLineLength: Int = NDJSONLineDecoder.defaultMaximumLineLength) {
        precondition(maximumLineLength > 0, "maximumLineLength must be positive")
        self.maximumLineLength = maximumLineLength
    }

    /// Returns the next non-blank line or oversize report, or `nil` if more bytes are needed.
    public mutating func decode(buffer: inout ByteBuffer) throws -> NDJSONFrame? {
        while true {
            // memchr over the bytes not searched yet: a client that sends a long line in
            // small pieces costs one pass over it, at memory speed, in any build.
            let searched = self.searchedBytes
            let offset: Int? = buffer.withUnsafeReadableBytes { raw in
                guard raw.count > searched, let base = raw.baseAddress else { return nil }
                guard let found = memchr(base + searched, Int32(ASCII.newline), raw.count - searched) else { return nil }
                return base.distance(to: UnsafeRawPointer(found))
            }
            guard let lineLength = offset else {
                self.searchedBytes = buffer.readableBytes
                return self.handleMissingNewline(buffer: &buffer)
            }
            self.searchedBytes = 0
            if self.discardingOversizedLine {
                buffer.moveReaderIndex(forwardBy: lineLength + 1)
                self.discardingOversizedLine = false
                continue
            }
            if let frame = self.takeLine(length: lineLength, terminatorLength: 1, from: &buffer) {
                return frame
            }
        }
    }

    /// Like ``decode(buffer:)``, then delivers a final line that has no `\n`.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> NDJSONFrame? {
        if let frame = try self.decode(buffer: &buffer) {
            return frame
        }
        // decode(buffer:) consumed any blank lines and discarded oversized remains, so what is
        // left is one unterminated line of at most maximumLineLength + 1 bytes.
        self.searchedBytes = 0
        return self.takeLine(length: buffer.readableBytes, terminatorLength: 0, from: &buffer)
    }

    /// With no newline in the readable bytes: reports an oversized line as soon as one is
    /// certain, discards the remains of one, or waits for more bytes.
    private mutating func handleMissingNewline(buffer: inout ByteBuffer) -> NDJSONFrame? {
        let readable = buffer.readableBytes
        if self.discardingOversizedLine {
            buffer.moveReaderIndex(forwardBy: readable)
            self.searchedBytes = 0
            return nil
        }
        // limit + 1 bytes could still be a full-length line ending in "\r\n"; anything longer
        // (or limit + 1 bytes not ending in "\r") is certainly too long.
        let certainlyTooLong =
            readable > self.maximumLineLength + 1
            || (readable == self.maximumLineLength + 1
                && buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) != ASCII.carriageReturn)
        guard certainlyTooLong else { return nil }
        buffer.moveReaderIndex(forwardBy: readable)
        self.searchedBytes = 0
        self.discardingOversizedLine = true
        return .oversized(limit: self.maximumLineLength)
    }

    /// Consumes a line of `length` bytes plus its terminator and returns it, or returns `nil`
    /// for a blank line (which is consumed silently).
    private func takeLine(length: Int, terminatorLength: Int, from buffer: inout ByteBuffer) -> NDJSONFrame? {
        var contentLength = length
        if contentLength > 0,
            buffer.getInteger(at: buffer.readerIndex + contentLength - 1, as: UInt8.self) == ASCII.carriageReturn
        {
            contentLength -= 1
        }
        guard contentLength <= self.maximumLineLength else {
            buffer.moveReaderIndex(forwardBy: length + terminatorLength)
            return .oversized(limit: self.maximumLineLength)
        }
        guard let line = buffer.readSlice(length: contentLength) else { return nil }
        buffer.moveReaderIndex(forwardBy: length - contentLength + terminatorLength)
        let isBlank = line.readableBytesView.allSatisfy { ASCII.isWhitespace($0) }
        return isBlank ? nil : .line(line)
    }
}

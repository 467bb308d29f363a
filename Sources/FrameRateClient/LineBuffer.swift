#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import FrameRateProtocol

/// The receive buffer of one stream, reused for every read, and the splitter of its bytes
/// into newline-terminated lines: the bottom of the low-level session layer.
///
/// Bytes come in through ``withWritableSpace(_:)`` (``ClientSocket/read(into:)`` reads
/// straight into it) and leave as lines through ``consumeLines(_:)``, which hands each
/// line to its body as a pointer into the buffer. Nothing is copied or allocated per read
/// or per line: the storage is allocated once, at `capacity` bytes, and grows (doubling)
/// only while one line is longer than that, up to ``maximumLineLength`` `+ 1` bytes.
/// After ``consumeLines(_:)`` the unfinished tail of the last read (a line split across
/// reads) is moved to the front before the next read, so each byte is moved at most once
/// per read and searched for a newline once.
///
/// Lines are given without their `\n` (and without a `\r` before it); empty lines are
/// skipped. The protocol's lines are JSON, which never contains a raw newline.
public struct LineBuffer {
    /// What ``consumeLines(_:)`` does after a line.
    public enum Step: Sendable, Hashable {
        /// Go on with the next complete line.
        case next
        /// Stop; the lines after this one stay buffered for the next ``consumeLines(_:)``.
        case stop
    }

    /// The default initial capacity, bytes: 64 KiB, a few hundred Tick lines per read.
    public static let defaultCapacity = 65_536

    /// The longest line accepted, in bytes, not counting its `\n`; a longer one makes
    /// ``withWritableSpace(_:)`` throw ``ClientSocketError/lineTooLong(limit:)``.
    public let maximumLineLength: Int

    /// Received bytes live in `storage[start..<end]`; `storage[start..<searched]` holds no `\n`.
    private var storage: [UInt8]
    private var start = 0
    private var end = 0
    private var searched = 0

    /// An empty buffer.
    /// - Parameters:
    ///   - capacity: initial size in bytes (positive); reads take at most this much at once.
    ///   - maximumLineLength: the longest line accepted (positive), by default the protocol's
    ///     1 MiB (``NDJSONLineDecoder/defaultMaximumLineLength``).
    public init(capacity: Int = LineBuffer.defaultCapacity, maximumLineLength: Int = NDJSONLineDecoder.defaultMaximumLineLength) {
        precondition(capacity > 0, "capacity must be positive")
        precondition(maximumLineLength > 0 && maximumLineLength < Int.max, "maximumLineLength must be positive")
        self.maximumLineLength = maximumLineLength
        storage = [UInt8](repeating: 0, count: min(capacity, maximumLineLength + 1))
    }

    /// Bytes received and not consumed as lines yet.
    public var bufferedByteCount: Int { end - start }

    /// Whether the received bytes fill the storage: the last read may have left more
    /// bytes in the socket (a read shorter than the space it was given drained it).
    public var isFull: Bool { end == storage.count }

    /// The storage's current size in bytes.
    public var capacity: Int { storage.count }

    /// Lets `body` write received bytes into the free space at the end of the buffer.
    ///
    /// First it makes room: the unconsumed bytes move to the front, and when they fill the
    /// whole storage it doubles (up to ``maximumLineLength`` `+ 1` bytes). Call
    /// ``consumeLines(_:)`` until it has taken every complete line before calling this:
    /// a full buffer at its largest size is taken as one line that is too long.
    /// - Parameter body: writes at most `space.count` bytes at the start of `space` and
    ///   returns how many it wrote.
    /// - Returns: what `body` returned.
    /// - Throws: ``ClientSocketError/lineTooLong(limit:)`` when there is no room left, or
    ///   what `body` throws (nothing is added then).
    @discardableResult
    public mutating func withWritableSpace(
        _ body: (_ space: UnsafeMutableRawBufferPointer) throws(ClientSocketError) -> Int
    ) throws(ClientSocketError) -> Int {
        try makeRoom()
        let offset = end
        // `withUnsafeMutableBytes` rethrows untyped: the body's typed error travels in a Result.
        let written = try storage.withUnsafeMutableBytes { raw in
            let space = UnsafeMutableRawBufferPointer(rebasing: raw[offset...])
            return Result { () throws(ClientSocketError) -> Int in try body(space) }
        }.get()
        precondition(written >= 0 && written <= storage.count - offset, "withWritableSpace: body wrote outside the space it was given")
        end += written
        return written
    }

    /// Appends `bytes` (for callers that receive bytes some other way, and for tests),
    /// growing the storage as needed.
    /// - Throws: ``ClientSocketError/lineTooLong(limit:)`` when the unconsumed bytes would
    ///   exceed ``maximumLineLength`` `+ 1`; the bytes that fitted stay appended.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(ClientSocketError) {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            try withWritableSpace { (space) throws(ClientSocketError) -> Int in
                let count = min(space.count, remaining.count)
                space.copyBytes(from: remaining.prefix(count))
                remaining = remaining.dropFirst(count)
                return count
            }
        }
    }

    /// Hands every complete line, in order, to `body` and consumes it, until `body` returns
    /// ``Step/stop`` or no complete line is left. The line is a pointer into the buffer,
    /// valid only during the call; `body` must not use this buffer.
    public mutating func consumeLines(_ body: (_ line: UnsafeRawBufferPointer) -> Step) {
        var cursor = start
        var searchedUpTo = max(searched, start)
        let limit = end
        storage.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            while searchedUpTo < limit {
                guard let found = memchr(base + searchedUpTo, Int32(UInt8(ascii: "\n")), limit - searchedUpTo) else {
                    searchedUpTo = limit
                    break
                }
                let newline = base.distance(to: UnsafeRawPointer(found))
                var lineEnd = newline
                if lineEnd > cursor && raw[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                let line = UnsafeRawBufferPointer(start: base + cursor, count: lineEnd - cursor)
                cursor = newline + 1
                searchedUpTo = cursor
                if !line.isEmpty && body(line) == .stop { break }
            }
        }
        start = cursor
        searched = searchedUpTo
        if start == end {
            start = 0
            end = 0
            searched = 0
        }
    }

    /// Removes and returns the unterminated bytes left in the buffer (a stream's last line
    /// when it ended without `\n`), once every complete line has been consumed.
    public mutating func takeRemainder() -> [UInt8] {
        let remainder = Array(storage[start..<end])
        start = 0
        end = 0
        searched = 0
        return remainder
    }

    /// Moves the unconsumed bytes to the front and grows the storage when they fill it.
    private mutating func makeRoom() throws(ClientSocketError) {
        if start > 0 {
            let count = end - start
            storage.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return }
                memmove(base, base + start, count)
            }
            searched -= start
            start = 0
            end = count
        }
        guard end == storage.count else { return }
        guard storage.count <= maximumLineLength else { throw .lineTooLong(limit: maximumLineLength) }
        let grown = storage.count > (maximumLineLength + 1) / 2 ? maximumLineLength + 1 : storage.count * 2
        storage.append(contentsOf: repeatElement(0, count: grown - storage.count))
    }
}

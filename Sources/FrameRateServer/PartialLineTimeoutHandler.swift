#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateModel
import NIOCore

/// Closes a connection whose request line does not arrive completely in time, and paces
/// the reads of a line that grows long: a client that sends a line without its newline
/// (slowly, or never) holds the daemon's memory for at most ``timeout``, and while its
/// open line is longer than ``longLine`` bytes it reads only when the shared
/// ``LongLineReadPacer`` lets it, so many such clients cannot fill the loop's turns.
///
/// It sits before the line decoder. A read that completes a line clears the deadline; one
/// that leaves a line open starts it (if it is not running), so the deadline always belongs
/// to the line open now. When it expires it fires
/// ``PartialLineTimedOut`` for the session handler, which answers with an error and
/// closes the connection. It counts the bytes after the last newline it has seen; past
/// ``longLine``, the next read request waits for the pacer.
final class PartialLineTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The user event fired when a line took longer than the timeout.
    struct PartialLineTimedOut: Sendable {
        /// The timeout that expired.
        let timeout: Duration
    }

    /// An open line longer than this many bytes is read at the pacer's pace.
    static let longLine = 4096

    private let timeout: Duration
    private let pacer: LongLineReadPacer?
    private var deadline: Scheduled<Void>?
    /// Bytes read since the last newline.
    private var openLineLength = 0
    /// A read waits in the pacer (asked once, however often NIO asks meanwhile).
    private var readPaced = false

    /// - Parameter pacer: paces reads of long lines; `nil` reads at once (tests of one connection).
    init(timeout: Duration, pacer: LongLineReadPacer? = nil) {
        self.timeout = timeout
        self.pacer = pacer
    }

    func read(context: ChannelHandlerContext) {
        guard let pacer, openLineLength > Self.longLine else {
            context.read()
            return
        }
        guard !readPaced else { return }
        readPaced = true
        pacer.enqueue {
            self.readPaced = false
            if context.channel.isActive { context.read() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let (length, endedALine) = Self.openLine(after: openLineLength, reading: buffer)
        openLineLength = length
        // The deadline is the open line's: a read that completes a line ends it, and the
        // line it opens (if it ends inside one) gets a deadline of its own. A client that
        // pipelines requests, or whose reads are paced 16 KiB at a time, has most reads end
        // inside its next line, and each of its lines still arrives in time.
        if endedALine {
            deadline?.cancel()
            deadline = nil
        }
        if length > 0 && deadline == nil {
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(FrameRateMath.nanoseconds(timeout))) { [timeout] in
                context.fireUserInboundEventTriggered(PartialLineTimedOut(timeout: timeout))
            }
        }
        context.fireChannelRead(data)
    }

    /// The open line's length after `buffer` is read, `length` before it: the bytes after
    /// its last newline, or `length` plus all of it when it holds none.
    static func openLineLength(after length: Int, reading buffer: ByteBuffer) -> Int {
        openLine(after: length, reading: buffer).length
    }

    /// ``openLineLength(after:reading:)``, and whether `buffer` ended a line (held a newline).
    static func openLine(after length: Int, reading buffer: ByteBuffer) -> (length: Int, endedALine: Bool) {
        // memchr, not a Swift loop: this runs on every read of every connection, and a
        // byte-at-a-time search of 16 KiB reads was 14 % of the control loop's time when
        // 200 connections streamed lines without a newline. (glibc's memrchr is not
        // visible to Swift; one memchr per newline finds the last one as fast.)
        let tail = buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard let base = bytes.baseAddress else { return nil }
            var last: Int?
            var from = 0
            while from < bytes.count, let found = memchr(base + from, Int32(UInt8(ascii: "\n")), bytes.count - from) {
                let index = base.distance(to: UnsafeRawPointer(found))
                last = index
                from = index + 1
            }
            return last.map { bytes.count - ($0 + 1) }
        }
        if let tail { return (tail, true) }
        let (sum, overflow) = length.addingReportingOverflow(buffer.readableBytes)
        return (overflow ? Int.max : sum, false)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}

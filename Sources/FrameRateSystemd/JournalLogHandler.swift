import CSystemd
public import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler that writes structured entries to the systemd journal
/// with `sd_journal_sendv` (the variadic `sd_journal_send` cannot be called
/// from Swift): `MESSAGE`, `PRIORITY`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`,
/// `SYSLOG_IDENTIFIER`, a fixed `MESSAGE_ID` for key events, and every metadata
/// key as a `FRAMERATED_*` field. `MESSAGE` and every `FRAMERATED_*` value go through
/// ``LogSanitizer`` (see ``JournalField/fields(message:level:metadata:identifier:file:function:line:sanitizer:)``),
/// so a client-chosen value can neither forge a line in `journalctl` output nor flood the journal.
///
/// If the journal cannot be reached, the line goes to stderr instead and the
/// handler says so once: no log line is lost.
public struct JournalLogHandler: LogHandler {
    /// Shared by every copy of a handler: whether the fallback notice was printed.
    final class Fallback: Sendable {
        let announced = Atomic<Bool>(false)
    }

    /// `SYSLOG_IDENTIFIER`.
    public let identifier: String
    /// The logger's label.
    public let label: String
    /// Metadata attached to every line of this logger.
    public var metadata: Logger.Metadata = [:]
    /// The minimum level written.
    public var logLevel: Logger.Level = .info
    private let fallback: Fallback

    /// A handler for logger `label`, entries tagged `SYSLOG_IDENTIFIER=identifier`.
    public init(label: String, identifier: String = "framerated") {
        self.label = label
        self.identifier = identifier
        self.fallback = Fallback()
    }

    /// Metadata of this logger.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one entry.
    public func log(event: LogEvent) {
        let level = event.level
        let message = event.message
        var merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if let error = event.error { merged["error"] = "\(error)" }
        let fields = JournalField.fields(
            message: message.description, level: level, metadata: merged, identifier: identifier,
            file: event.file, function: event.function, line: event.line
        )
        let result = Self.send(fields)
        if result < 0 {
            if !fallback.announced.exchange(true, ordering: .relaxed) {
                StandardError.write("\(identifier): the journal is unreachable (\(String(cString: strerror(-result)))); logging to stderr\n")
            }
            let line = StandardErrorLogHandler.line(timestamp: "", level: level, label: label, metadata: merged, message: message.description)
            StandardError.write(line + "\n")
        }
    }

    /// Sends fields with `sd_journal_sendv`; returns its result (negative errno on failure).
    static func send(_ fields: [(name: String, value: String)]) -> Int32 {
        var storage: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (name, value) in fields {
            let start = storage.count
            storage.append(contentsOf: name.utf8)
            storage.append(UInt8(ascii: "="))
            storage.append(contentsOf: value.utf8)
            ranges.append(start..<storage.count)
        }
        return storage.withUnsafeMutableBytes { bytes -> Int32 in
            var vectors = ranges.map { range in
                iovec(iov_base: bytes.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            return vectors.withUnsafeMutableBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }

    /// Whether this process's stderr is connected to the journal: `$JOURNAL_STREAM`
    /// names stderr's device and inode (systemd sets it for `StandardError=journal`).
    public static var isStandardErrorJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

/// Unbuffered writes to file descriptor 2.
enum StandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

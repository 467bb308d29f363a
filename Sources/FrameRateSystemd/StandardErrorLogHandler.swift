public import Logging
public import UntrustedText
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler writing one line per entry to stderr:
/// `2026-01-01T00:00:00+0000 info framerated: link=3 pid=42 link 3 registered`.
///
/// The message and every metadata value go through ``LogSanitizer``, so a value a client
/// chose (a link label, a method name, a command) can neither start a line of its own nor
/// fill the log: control characters are escaped and long values are shortened.
public struct StandardErrorLogHandler: LogHandler {
    /// The logger's label.
    public let label: String
    /// Metadata attached to every line of this logger.
    public var metadata: Logger.Metadata = [:]
    /// The minimum level written.
    public var logLevel: Logger.Level = .info
    private let sanitizer: LogSanitizer

    /// A handler for logger `label`, shortening values with `sanitizer`.
    public init(label: String, sanitizer: LogSanitizer = LogSanitizer()) {
        self.label = label
        self.sanitizer = sanitizer
    }

    /// Metadata of this logger.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    public func log(event: LogEvent) {
        var merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if let error = event.error { merged["error"] = "\(error)" }
        let line = Self.line(
            timestamp: Self.timestamp(), level: event.level, label: label, metadata: merged,
            message: event.message.description, sanitizer: sanitizer
        )
        StandardError.write(line + "\n")
    }

    /// One log line without its newline: `timestamp level label: key=value ... message`, with
    /// metadata sorted by key and the message and every value sanitized. Keys are the
    /// daemon's own names and are written as they are.
    public static func line(
        timestamp: String, level: Logger.Level, label: String, metadata: Logger.Metadata, message: String,
        sanitizer: LogSanitizer = LogSanitizer()
    ) -> String {
        let rendered = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\(sanitizer.sanitize("\($0.value)"))" }.joined()
        let prefix = timestamp.isEmpty ? "" : timestamp + " "
        return "\(prefix)\(level) \(label):\(rendered) \(sanitizer.sanitize(message))"
    }

    /// The local time as `2026-01-01T00:00:00+0000` (the format swift-log's StreamLogHandler uses).
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

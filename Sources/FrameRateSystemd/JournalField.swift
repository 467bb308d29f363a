public import Logging
public import UntrustedText

/// Builds journal fields from swift-log data. journald silently drops fields
/// whose names are not `[A-Z0-9_]`, start with `_` or exceed 64 bytes, so every
/// metadata key goes through ``name(forMetadataKey:)``.
public enum JournalField {
    /// The prefix of every field made from metadata.
    public static let metadataPrefix = "FRAMERATED_"

    /// A valid journal field name for a metadata key: uppercased, every other
    /// character `_`, prefixed `FRAMERATED_`, at most 64 bytes. `link-id` → `FRAMERATED_LINK_ID`.
    public static func name(forMetadataKey key: String) -> String {
        var body = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "a"..."z": body.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
            case "A"..."Z", "0"..."9": body.unicodeScalars.append(scalar)
            default: body.append("_")
            }
        }
        while body.hasPrefix("_") { body.removeFirst() }
        if body.isEmpty { body = "FIELD" }
        return String((metadataPrefix + body).prefix(64))
    }

    /// The syslog priority for a log level (`PRIORITY=`): 7 debug … 2 critical.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Every field of one log line, in order: `MESSAGE`, `PRIORITY`, `CODE_*`,
    /// `SYSLOG_IDENTIFIER`, `MESSAGE_ID` (when the `event` metadata has one), and one
    /// `FRAMERATED_*` field per metadata key (sorted, so the order is stable). `MESSAGE` and
    /// the `FRAMERATED_*` values are sanitized (``LogSanitizer``: escaped, shortened).
    public static func fields(
        message: String, level: Logger.Level, metadata: Logger.Metadata, identifier: String,
        file: String, function: String, line: UInt, sanitizer: LogSanitizer = LogSanitizer()
    ) -> [(name: String, value: String)] {
        var fields: [(String, String)] = [
            ("MESSAGE", sanitizer.sanitize(message)), ("PRIORITY", String(priority(of: level))),
            ("CODE_FILE", file), ("CODE_LINE", String(line)), ("CODE_FUNC", function),
            ("SYSLOG_IDENTIFIER", identifier),
        ]
        if case .string(let event)? = metadata["event"], let id = JournalMessageID.byEvent[event] {
            fields.append(("MESSAGE_ID", id))
        }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            fields.append((name(forMetadataKey: key), sanitizer.sanitize("\(value)")))
        }
        return fields
    }
}

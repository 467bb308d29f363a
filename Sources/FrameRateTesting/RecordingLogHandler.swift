package import Logging
import Synchronization

/// A log handler keeping every entry (its message and its metadata, the logger's merged
/// with the entry's, as strings), for tests that check what the daemon logs.
package final class RecordingLogHandler: LogHandler, Sendable {
    /// One logged entry.
    package struct Entry: Sendable {
        package var message: String
        package var metadata: [String: String]
    }

    private let recorded = Mutex<[Entry]>([])
    private let loggerMetadata = Mutex<Logger.Metadata>([:])

    package init() {}

    /// Every entry, in order.
    package var entries: [Entry] { recorded.withLock { $0 } }
    /// Every entry's message, in order.
    package var messages: [String] { entries.map(\.message) }

    package var metadata: Logger.Metadata {
        get { loggerMetadata.withLock { $0 } }
        set { loggerMetadata.withLock { $0 = newValue } }
    }
    package var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { loggerMetadata.withLock { $0[key] = newValue } }
    }

    package func log(event: LogEvent) {
        var merged: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { merged[key] = "\(value)" }
        let entry = Entry(message: event.message.description, metadata: merged)
        recorded.withLock { $0.append(entry) }
    }
}

/// The fixed journal `MESSAGE_ID`s (128-bit, as `journalctl MESSAGE_ID=…` and
/// catalogs expect) for the events an operator searches for. Listed in
/// `docs/operations.md`. A log line carries one when its `event` metadata names
/// one of these events.
public enum JournalMessageID {
    /// `event` metadata value → message id.
    public static let byEvent: [String: String] = [
        "daemon-started": "3a9d6c0e4b2f4a8e9c1d7f5b2e8a4c60",
        "daemon-stopping": "5f2c8e1a7b3d4c9e8a6f0d2b4c1e7a95",
        "link-registered": "0e8b3a5c7d2f4e1a9b6c8d0f2a4e6b13",
        "link-released": "7c4e1b9a3d5f4a2c8e0b6d1f9a3c5e27",
        "refresh-rate-changed": "9b1d5f3a7c2e4b8d9f0a6c4e2b8d1f59",
        "client-rejected": "2d6a9e4c1f8b4d3a8c5e7b0d9f2a6c48",
    ]
}

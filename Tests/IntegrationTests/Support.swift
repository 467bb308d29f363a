import Foundation

/// One tick line printed by `raw_client.py ticks` or `framectl register --json`.
struct PrintedTick: Decodable {
    var link: UInt64
    var sequence: UInt64
    var timestamp: Double
    var targetTimestamp: Double
    var duration: Double
    var refreshRate: Double
    var callbackRate: Double
    var skipped: UInt64
    /// Present (and true) only on a boosted link's ticks.
    var boosted: Bool?

    static func parse(_ lines: [String]) -> [PrintedTick] {
        lines.compactMap { line in
            guard line.contains("\"sequence\"") else { return nil }
            return try? JSONDecoder().decode(PrintedTick.self, from: Data(line.utf8))
        }
    }
}

import FrameRateClient
import FrameRateModel

/// The lines `register` and `watch` print on stderr when they lose the daemon and when
/// they are back (stdout stays the tick or event stream).
enum ConnectionText {
    /// `daemon gone; reconnecting…` / `reconnected after 1.2 s; link 3 re-registered`.
    /// - Parameter mentionWatches: whether restarted watches are named (`watch` does; `register`'s
    ///   own watch, which only follows its link's limit, is not the user's business).
    static func line(for change: ConnectionChange, mentionWatches: Bool = true) -> String {
        switch change {
        case .lost:
            return "daemon gone; reconnecting…"
        case .restored(let outage, let links, let watches):
            let seconds = Double(outage.components.seconds) + Double(outage.components.attoseconds) / 1e18
            var parts: [String] = []
            if !links.isEmpty {
                let names = links.map { String($0.rawValue) }.joined(separator: ", ")
                parts.append("link\(links.count == 1 ? "" : "s") \(names) re-registered")
            }
            if watches > 0 && mentionWatches { parts.append("watch\(watches == 1 ? "" : "es") restarted") }
            return "reconnected after \(Fixed.format(seconds, decimals: 1)) s" + (parts.isEmpty ? "" : "; " + parts.joined(separator: "; "))
        }
    }
}

import FrameRateModel
import FrameRateProtocol

/// Hitch figures for people, rated on the display-performance guide's scale.
enum HitchText {
    /// The guide's verdict on a hitch-time ratio in ms/s: under 5 good, 5 to 10 noticeable, over 10 bad.
    static func rating(_ ratioMillisecondsPerSecond: Double) -> String {
        switch ratioMillisecondsPerSecond {
        case ..<5: "good"
        case ...10: "noticeable"
        default: "bad"
        }
    }

    /// `3.2 ms/s (good)`.
    static func ratio(_ summary: HitchSummary) -> String {
        "\(Fixed.format(summary.ratioMillisecondsPerSecond, decimals: 1)) ms/s (\(rating(summary.ratioMillisecondsPerSecond)))"
    }

    /// `link 3: 3.2 ms/s (good) over 10 s; 1234 frames, 5 late, 1 dropped, 41.7 ms of hitches`.
    static func describe(link: LinkID, _ summary: HitchSummary) -> String {
        let window = Fixed.format(Double(summary.window.components.seconds), decimals: 0)
        let time = Double(summary.hitchTime.components.seconds) * 1000 + Double(summary.hitchTime.components.attoseconds) / 1e15
        return "link \(link.rawValue): \(ratio(summary)) over \(window) s; \(summary.frames) frames, \(summary.late) late, "
            + "\(summary.dropped) dropped, \(Fixed.format(time, decimals: 1)) ms of hitches"
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// The lines `framectl register` prints.
enum TickText {
    /// `link 3 on display 0: refresh 120 Hz, callback 120 Hz`.
    static func registration(link: LinkID, display: DisplayID, refreshRate: Double, callbackRate: Double) -> String {
        "link \(link.rawValue) on display \(display.rawValue): refresh \(FrameRateMath.format(refreshRate)) Hz, "
            + "callback \(FrameRateMath.format(callbackRate)) Hz"
    }

    /// `{"link":3,"display":0,"refreshRate":120.0,"callbackRate":120.0,"decision":{…},"limitedBy":null,…}`:
    /// the Register result's fields, with the application's link id.
    static func registrationJSON(
        link: LinkID, display: DisplayID, refreshRate: Double, callbackRate: Double, decision: DecisionState?, limit: LinkLimit?
    ) -> String {
        LinkStatusResult(
            link: link, display: display, refreshRate: refreshRate, callbackRate: callbackRate, decision: decision, limit: limit
        ).jsonValue.jsonString
    }

    /// One tick for people:
    /// `tick 42  time 5012.345678  target 5012.354012  left 7.912 ms  rate 119.98 Hz  skipped 0`
    /// (`rate -` on the first tick; `  boosted` at the end while the link is boosted).
    ///
    /// - Parameters:
    ///   - previousTimestamp: the previous tick's `timestamp`, for the measured
    ///     rate `1 / (timestamp - previousTimestamp)`; `nil` for the first tick.
    ///   - now: the current time, seconds on `CLOCK_MONOTONIC`; the working time
    ///     left is `targetTimestamp - now`.
    static func human(_ tick: TickNotification, previousTimestamp: Double?, now: Double) -> String {
        var rate = "-"
        if let previousTimestamp, tick.timestamp > previousTimestamp {
            rate = Fixed.format(1 / (tick.timestamp - previousTimestamp), decimals: 2) + " Hz"
        }
        return "tick \(tick.sequence)  time \(Fixed.format(tick.timestamp, decimals: 6))  "
            + "target \(Fixed.format(tick.targetTimestamp, decimals: 6))  "
            + "left \(Fixed.format(tick.workingTimeLeft(now: now) * 1000, decimals: 3)) ms  "
            + "rate \(rate)  skipped \(tick.skipped)" + (tick.boosted ? "  boosted" : "")
    }

    /// One tick as a compact JSON object: the tick's params plus `workingTime`,
    /// `targetTimestamp - now` in seconds.
    static func json(_ tick: TickNotification, now: Double) -> String {
        var object = tick.jsonValue.objectValue ?? JSONObject()
        object["workingTime"] = JSONValue(tick.workingTimeLeft(now: now))
        return JSONValue.object(object).jsonString
    }
}

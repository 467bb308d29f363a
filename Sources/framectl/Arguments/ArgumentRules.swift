import ArgumentParser
import FrameRateModel
import FrameRateProtocol

/// Checks of command-line values that need no daemon; each failure is a
/// `ValidationError` (exit status 2) whose message states the rule.
enum ArgumentRules {
    /// The range `--min`, `--max`, `--preferred` describe, or the rule it breaks.
    static func range(minimum: Double, maximum: Double, preferred: Double) throws(ValidationError) -> FrameRateRange {
        do {
            return try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
        } catch {
            throw ValidationError("invalid range: \(error.message) (--min, --max, --preferred are in Hz)")
        }
    }

    /// `value` as a display id: a whole number of at least 0.
    static func display(_ value: Int?) throws(ValidationError) -> DisplayID? {
        guard let value else { return nil }
        guard value >= 0 else { throw ValidationError("--display must be 0 or more (0 is the default display), got \(value)") }
        return DisplayID(rawValue: value)
    }

    /// `value` as a tick count: at least 1.
    static func count(_ value: Int?) throws(ValidationError) -> Int? {
        guard let value else { return nil }
        guard value >= 1 else { throw ValidationError("--count must be at least 1, got \(value)") }
        return value
    }

    /// `--timelines` and `--latency`: within ``DisplayLinkConfiguration/timelineRange`` and
    /// ``DisplayLinkConfiguration/frameLatencyRange``, the rules the daemon applies.
    static func frameTiming(timelines: Int, latency: Int) throws(ValidationError) -> (timelines: Int, latency: Int) {
        let timelineRange = DisplayLinkConfiguration.timelineRange
        guard timelineRange.contains(timelines) else {
            throw ValidationError("--timelines must be \(timelineRange.lowerBound) to \(timelineRange.upperBound) (frame timelines listed per tick), got \(timelines)")
        }
        let latencyRange = DisplayLinkConfiguration.frameLatencyRange
        guard latencyRange.contains(latency) else {
            throw ValidationError("--latency must be \(latencyRange.lowerBound) or \(latencyRange.upperBound) (intervals from a tick to its frame's presentation), got \(latency)")
        }
        return (timelines, latency)
    }

    /// `framectl advance`'s seconds: finite, from 0 to ``AdvanceRequest/maximumSeconds``.
    static func advance(_ seconds: Double) throws(ValidationError) -> Double {
        guard seconds.isFinite, seconds >= 0, seconds <= AdvanceRequest.maximumSeconds else {
            throw ValidationError("seconds must be a finite number from 0 to \(Int(AdvanceRequest.maximumSeconds)) (a virtual day), got \(seconds)")
        }
        return seconds
    }

    /// `text` parsed as the JSON params of `framectl call`: an object or an array; `nil` means none.
    static func params(_ text: String?) throws(ValidationError) -> JSONValue? {
        guard let text else { return nil }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text)
        } catch {
            throw ValidationError("params are not valid JSON: \(error.message); quote them for the shell, e.g. '{\"link\":3}'")
        }
        switch value {
        case .object, .array: return value
        default: throw ValidationError("params must be a JSON object or array, got \(value.typeName)")
        }
    }
}

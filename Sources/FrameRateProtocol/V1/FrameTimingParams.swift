import FrameRateModel

/// Reads `timelines`: an integer in ``DisplayLinkConfiguration/timelineRange`` (1...7), or `nil`
/// when absent; anything else is `INVALID_ARGUMENT` naming the bounds.
func readTimelines(_ reader: ParamReader) throws(RPCError) -> Int? {
    let range = DisplayLinkConfiguration.timelineRange
    // Within 1...7 by the bounds just checked: the conversion is exact.
    return try reader.integer("timelines", minimum: Int64(range.lowerBound), maximum: Int64(range.upperBound)).map { Int($0) }
}

/// Reads `preferredFrameLatency`: an integer in ``DisplayLinkConfiguration/frameLatencyRange``
/// (1 or 2), or `nil` when absent; anything else is `INVALID_ARGUMENT` naming the bounds.
func readFrameLatency(_ reader: ParamReader) throws(RPCError) -> Int? {
    let range = DisplayLinkConfiguration.frameLatencyRange
    return try reader.integer("preferredFrameLatency", minimum: Int64(range.lowerBound), maximum: Int64(range.upperBound)).map { Int($0) }
}

public import FrameRateModel
public import NIOCore

/// `framerate.v1.DisplayLink/Tick` params: one delivered tick, times in
/// seconds on `CLOCK_MONOTONIC`.
public struct TickNotification: Hashable, Sendable {
    /// The link.
    public var link: LinkID
    /// The link's interval number; the previous tick's plus `skipped + 1`.
    public var sequence: UInt64
    /// The vsync that starts the interval, seconds on `CLOCK_MONOTONIC`.
    public var timestamp: Double
    /// The deadline for the next frame, `timestamp + 1 / callbackRate`, seconds on `CLOCK_MONOTONIC`.
    public var targetTimestamp: Double
    /// The display's refresh period, seconds.
    public var duration: Double
    /// The display's refresh rate, Hz.
    public var refreshRate: Double
    /// The link's callback rate, Hz.
    public var callbackRate: Double
    /// The link's intervals that passed without a tick since its last one.
    public var skipped: UInt64
    /// Whether the link is boosted (`DisplayLink/Boost`) at this tick; on the wire only
    /// when `true`.
    public var boosted: Bool
    /// The vsync where a frame started at this tick and finished by ``targetTimestamp`` is
    /// shown, `timestamp + preferredFrameLatency / callbackRate`, seconds on `CLOCK_MONOTONIC`
    /// (``targetTimestamp`` at latency 1; a daemon older than the field is read so too).
    public var targetPresentationTimestamp: Double
    /// The link's next frames, earliest first, for a link registered with `timelines` > 1
    /// (absent on the wire, and empty here, otherwise).
    public var timelines: [TickTimeline] = []

    /// Builds a notification.
    public init(
        link: LinkID, sequence: UInt64, timestamp: Double, targetTimestamp: Double, duration: Double,
        refreshRate: Double, callbackRate: Double, skipped: UInt64, boosted: Bool = false
    ) {
        self.boosted = boosted
        self.targetPresentationTimestamp = targetTimestamp
        self.link = link
        self.sequence = sequence
        self.timestamp = timestamp
        self.targetTimestamp = targetTimestamp
        self.duration = duration
        self.refreshRate = refreshRate
        self.callbackRate = callbackRate
        self.skipped = skipped
    }

    /// Parses the notification's params.
    public init(json: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(json, allowed: nil)
        self.link = LinkID(rawValue: UInt64(try reader.requiredInteger("link", minimum: 1)))
        self.sequence = UInt64(try reader.requiredInteger("sequence", minimum: 0))
        self.timestamp = try reader.requiredNumber("timestamp")
        self.targetTimestamp = try reader.requiredNumber("targetTimestamp")
        self.duration = try reader.requiredNumber("duration")
        self.refreshRate = try reader.requiredNumber("refreshRate")
        self.callbackRate = try reader.requiredNumber("callbackRate")
        self.skipped = UInt64(try reader.requiredInteger("skipped", minimum: 0))
        self.boosted = try reader.bool("boosted") ?? false
        self.targetPresentationTimestamp = try reader.number("targetPresentationTimestamp") ?? targetTimestamp
        if let entries = try reader.array("timelines") {
            // A tick lists at most seven; more is not a daemon's tick.
            guard entries.count <= FrameSchedule.maximumFrames else {
                throw .invalidParams(field: reader.fieldPath("timelines"), "timelines has \(entries.count) entries; at most \(FrameSchedule.maximumFrames)")
            }
            var timelines: [TickTimeline] = []
            for (index, entry) in entries.enumerated() {
                timelines.append(try TickTimeline(json: entry, path: "\(reader.fieldPath("timelines"))[\(index)]"))
            }
            self.timelines = timelines
        }
    }

    /// The params object (for tests and tools; the daemon writes ticks with ``TickLineEncoder``).
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "link": JSONValue(link.rawValue), "sequence": JSONValue(sequence), "timestamp": JSONValue(timestamp),
            "targetTimestamp": JSONValue(targetTimestamp), "duration": JSONValue(duration),
            "refreshRate": JSONValue(refreshRate), "callbackRate": JSONValue(callbackRate), "skipped": JSONValue(skipped),
        ]
        if boosted { object["boosted"] = .bool(true) }
        object["targetPresentationTimestamp"] = JSONValue(targetPresentationTimestamp)
        if !timelines.isEmpty { object["timelines"] = .array(timelines.map(\.jsonValue)) }
        return .object(object)
    }
}

/// Writes Tick notification lines without building a `JSONValue`: the 120 Hz hot path.
///
/// Every field but `link`, `sequence` and `skipped` is the same for all links
/// ticking at one vsync with one callback rate, so those fields are encoded
/// once per (vsync, cadence) with ``sharedFields(timestamp:targetTimestamp:duration:refreshRate:callbackRate:allocator:)``
/// and copied into each link's line by ``write(link:sequence:skipped:shared:into:)``.
public enum TickLineEncoder {
    private static let prefix: StaticString = #"{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":"#
    private static let sequenceKey: StaticString = #","sequence":"#
    private static let suffix: StaticString = "}}\n"

    /// The encoded `,"timestamp":…,"callbackRate":…[,"boosted":true],"skipped":` segment
    /// shared by every link ticking at one vsync with one cadence and one boosted flag.
    /// Times are whole nanoseconds on `CLOCK_MONOTONIC`, written as seconds with nine decimals.
    /// `boosted` costs nothing per link: boosted links get their own shared segment.
    public static func sharedFields(
        timestamp: Int64, targetTimestamp: Int64, duration: Int64, refreshRate: Double, callbackRate: Double,
        boosted: Bool = false, targetPresentationTimestamp: Int64? = nil, timelines: [EncodedTimeline] = [],
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        // Written through one reservation: each `ByteBuffer` write of a key or a value cost
        // about 230 instructions of checks (`framebench tick-cost` under callgrind), a
        // vsync's largest fixed cost with few links.
        let refreshText = rateText(refreshRate)
        let callbackText = rateText(callbackRate)
        let bound = sharedKeyBytes + 4 * WireTime.maximumBytes + rateBytes(refreshText) + rateBytes(callbackText) + timelinesBytes(timelines.count)
        var buffer = allocator.buffer(capacity: bound)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { out in
            var at = copy(timestampKey, to: out, at: 0)
            at = WireTime.write(nanoseconds: timestamp, to: out, at: at)
            at = copy(targetTimestampKey, to: out, at: at)
            at = WireTime.write(nanoseconds: targetTimestamp, to: out, at: at)
            at = copy(durationKey, to: out, at: at)
            at = WireTime.write(nanoseconds: duration, to: out, at: at)
            at = copy(refreshRateKey, to: out, at: at)
            at = writeRate(refreshRate, text: refreshText, to: out, at: at)
            at = copy(callbackRateKey, to: out, at: at)
            at = writeRate(callbackRate, text: callbackText, to: out, at: at)
            if boosted { at = copy(boostedField, to: out, at: at) }
            at = copy(targetPresentationTimestampKey, to: out, at: at)
            at = WireTime.write(nanoseconds: targetPresentationTimestamp ?? targetTimestamp, to: out, at: at)
            at = writeTimelines(timelines, to: out, at: at)
            return copy(skippedKey, to: out, at: at)
        }
        return buffer
    }

    private static let timestampKey: StaticString = #","timestamp":"#
    private static let targetTimestampKey: StaticString = #","targetTimestamp":"#
    private static let durationKey: StaticString = #","duration":"#
    private static let refreshRateKey: StaticString = #","refreshRate":"#
    private static let callbackRateKey: StaticString = #","callbackRate":"#
    private static let boostedField: StaticString = #","boosted":true"#
    private static let targetPresentationTimestampKey: StaticString = #","targetPresentationTimestamp":"#
    private static let skippedKey: StaticString = #","skipped":"#
    /// The bytes of every key of the shared segment, `boosted` included.
    private static let sharedKeyBytes = [
        timestampKey, targetTimestampKey, durationKey, refreshRateKey, callbackRateKey, boostedField, targetPresentationTimestampKey,
        skippedKey,
    ].reduce(0) { $0 + $1.utf8CodeUnitCount }

    /// Appends one complete Tick line (ending in `\n`) to `buffer`, reserving room once
    /// and copying the parts with raw stores: one uniqueness and capacity check per line,
    /// not one per part (the 120 Hz hot path).
    public static func write(link: UInt64, sequence: UInt64, skipped: UInt64, shared: ByteBuffer, into buffer: inout ByteBuffer) {
        shared.withUnsafeReadableBytes { shared in
            write(link: link, sequence: sequence, skipped: skipped, shared: shared, into: &buffer)
        }
    }

    /// ``write(link:sequence:skipped:shared:into:)`` with the shared segment's bytes in
    /// place (the fan-out writes many lines from one segment: no reference to retain per line).
    public static func write(link: UInt64, sequence: UInt64, skipped: UInt64, shared: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: lineBound(sharedCount: shared.count)) { out in
            write(link: link, sequence: sequence, skipped: skipped, shared: shared, to: out, at: 0)
        }
    }

    /// The most bytes one line takes whose shared segment has `sharedCount` bytes: its
    /// fixed parts, the segment, and 20 digits (`UInt64.max`) for each of its three decimals.
    @inlinable
    public static func lineBound(sharedCount: Int) -> Int {
        fixedBytes + sharedCount + 3 * 20
    }

    /// The bytes of a line's fixed parts (its prefix, `,"sequence":` and its end).
    public static let fixedBytes = prefix.utf8CodeUnitCount + sequenceKey.utf8CodeUnitCount + suffix.utf8CodeUnitCount

    /// Writes one complete Tick line at `at` in `out`, which must have ``lineBound(sharedCount:)``
    /// bytes of room from `at` on (a caller writing many lines through one pointer, the
    /// fan-out's outbox, reserves room for all of them at once).
    /// - Returns: the offset after the line.
    public static func write(
        link: UInt64, sequence: UInt64, skipped: UInt64, shared: UnsafeRawBufferPointer, to out: UnsafeMutableRawBufferPointer, at start: Int
    ) -> Int {
        precondition(start >= 0 && out.count - start >= lineBound(sharedCount: shared.count), "no room for a tick line")
        var at = copy(prefix, to: out, at: start)
        at = DecimalText.write(link, to: out, at: at)
        at = copy(sequenceKey, to: out, at: at)
        at = DecimalText.write(sequence, to: out, at: at)
        if let source = shared.baseAddress { out.baseAddress!.advanced(by: at).copyMemory(from: source, byteCount: shared.count) }
        at += shared.count
        at = DecimalText.write(skipped, to: out, at: at)
        return copy(suffix, to: out, at: at)
    }

    /// Copies `text` to `out` at `at`; returns the offset after it.
    @inline(__always)
    static func copy(_ text: StaticString, to out: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        out.baseAddress!.advanced(by: at).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        return at + text.utf8CodeUnitCount
    }

    /// Appends `rate` (Hz) as ``JSONNumber`` writes it, `Double.description`: a whole rate up
    /// to 1,000,000 Hz (every rate of the built-in profiles) in place as `N.0`, which is
    /// that description, and any other through it.
    static func writeRate(_ rate: Double, into buffer: inout ByteBuffer) {
        let text = rateText(rate)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: rateBytes(text)) { writeRate(rate, text: text, to: $0, at: 0) }
    }

    /// `rate`'s ``JSONNumber`` text when ``writeRate(_:into:)`` cannot write it in place
    /// (not a whole number of Hz from 1 to 1,000,000), else `nil`.
    private static func rateText(_ rate: Double) -> String? {
        rate >= 1 && rate <= 1_000_000 && rate.rounded(.towardZero) == rate ? nil : JSONNumber(rate).text
    }

    /// The bytes a rate with ``rateText(_:)`` `text` takes at most: 20 digits and `.0`, or the text.
    private static func rateBytes(_ text: String?) -> Int { text?.utf8.count ?? 20 + 2 }

    /// Writes `rate` to `out` at `at` (``rateBytes(_:)`` of room): in place, or its `text`
    /// (``rateText(_:)``) when it has one; returns the offset after it.
    private static func writeRate(_ rate: Double, text: String?, to out: UnsafeMutableRawBufferPointer, at: Int) -> Int {
        precondition(at >= 0 && out.count - at >= rateBytes(text), "no room for a rate")
        guard var text else {
            let end = DecimalText.write(UInt64(rate), to: out, at: at)
            out[end] = UInt8(ascii: ".")
            out[end + 1] = UInt8(ascii: "0")
            return end + 2
        }
        return text.withUTF8 { bytes in
            out.baseAddress!.advanced(by: at).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            return at + bytes.count
        }
    }
}

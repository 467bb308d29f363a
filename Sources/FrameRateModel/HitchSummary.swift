/// One link's presented frames and hitches, as `Compositor/GetState` shows them (`hitches`).
public struct HitchSummary: Hashable, Sendable {
    /// Frames shown since the link registered.
    public let frames: UInt64
    /// Of those, frames shown after their expected time (hitch above zero).
    public let late: UInt64
    /// Frames a newer `Present` replaced before a vsync showed them.
    public let dropped: UInt64
    /// The sum of every hitch since the link registered.
    public let hitchTime: Duration
    /// Hitch time in milliseconds per second of the link's unpaused time over the last
    /// ``window`` (or since registration, when that is shorter): under 5 is good, 5–10
    /// noticeable, over 10 bad (the display-performance guide's scale).
    public let ratioMillisecondsPerSecond: Double
    /// The window ``ratioMillisecondsPerSecond`` is measured over.
    public let window: Duration

    /// Builds a summary (clients parse one from the wire).
    public init(frames: UInt64, late: UInt64, dropped: UInt64, hitchTime: Duration, ratioMillisecondsPerSecond: Double, window: Duration) {
        self.frames = frames
        self.late = late
        self.dropped = dropped
        self.hitchTime = hitchTime
        self.ratioMillisecondsPerSecond = ratioMillisecondsPerSecond
        self.window = window
    }
}

/// Adaptive pacing for one display link (`adaptive: true`): steps the link down to a
/// lower, even rate when its frames keep missing their deadline, and back up once
/// they fit again. A pure state machine fed one measured frame time per frame.
///
/// Rules (see `docs/arbitration.md`, "Stepping down when a client can't keep up"):
/// - **Frame time** is measured from the tick's `timestamp` to the client's report that
///   the frame is finished (`FrameDone`; `Present` feeds the same measurement). A frame
///   is late when it finished after its tick's `targetTimestamp` (frame time > interval).
/// - **Stepping down.** When at least ``Settings/overrunsToStepDown`` of the last
///   ``Settings/window`` frames were late, the link is held to the next rate below its
///   callback rate that divides the refresh rate evenly (`refresh / n`) and that its
///   recent frame times fit: fewer than ``Settings/overrunsToStepDown`` of them longer
///   than that rate's interval. Never below ``Settings/lowestRate``. A 120 Hz link taking
///   12 ms a frame goes to 60 Hz (120 / 2), not to an uneven 80.
/// - **Stepping up.** Once ``Settings/framesToStepUp`` consecutive frames would have fit
///   the rate it stepped down from, it goes back there (one step at a time), so it does
///   not flap. Back at the first step's rate, it is no longer held.
///
/// Costs: O(window) memory and O(window x steps) per step-down, both bounded.
public struct OverrunMonitor: Hashable, Sendable {
    /// The rule's numbers.
    public struct Settings: Hashable, Sendable {
        /// How many recent frames a step-down looks at. Default 30.
        public var window: Int
        /// How many of them must be late to step down. Default 15 (half of 30).
        public var overrunsToStepDown: Int
        /// How many consecutive frames must fit the higher rate to step back up. Default 60.
        public var framesToStepUp: Int
        /// The lowest rate a link is stepped down to, in Hz. Default 10.
        public var lowestRate: Double

        /// The defaults: 15 of 30 late to step down, 60 fitting in a row to step up, not below 10 Hz.
        public init(window: Int = 30, overrunsToStepDown: Int = 15, framesToStepUp: Int = 60, lowestRate: Double = 10) {
            self.window = Swift.max(1, window)
            self.overrunsToStepDown = Swift.min(Swift.max(1, overrunsToStepDown), self.window)
            self.framesToStepUp = Swift.max(1, framesToStepUp)
            self.lowestRate = Swift.max(0.01, lowestRate)
        }
    }

    /// What one frame changed.
    public enum Step: Hashable, Sendable {
        /// The link is now held to this rate, in Hz.
        case down(to: Double)
        /// The link is back up: held to this rate, in Hz, or not held at all (`nil`).
        case up(to: Double?)
    }

    /// The rule's numbers.
    public let settings: Settings
    /// The rate the link is held to, in Hz, or `nil` when it is not held.
    public private(set) var ceiling: Double?
    /// The rates it stepped down from, most recent last: where a step up goes.
    private var stepUpTargets: [Double] = []
    /// The latest frames (a ring of at most ``Settings/window``).
    private var recent: [Frame] = []
    /// Where the next frame goes in `recent` once it is full.
    private var nextSlot = 0
    /// How many frames in `recent` were late.
    private var lateCount = 0
    /// Consecutive frames that would have fit the step-up target.
    private var fitStreak = 0

    /// One measured frame.
    private struct Frame: Hashable, Sendable {
        /// From tick to finished.
        let time: Duration
        /// Whether it finished after its tick's target.
        let late: Bool
    }

    /// A monitor with no frames yet, not holding the link.
    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Records one finished frame: it took `frameTime` against an interval of `interval`
    /// (its tick's `targetTimestamp - timestamp`), ticking at `callbackRate` Hz on a
    /// display at `refresh` Hz.
    /// - Returns: the step this frame caused, if any.
    public mutating func record(frameTime: Duration, interval: Duration, callbackRate: Double, refresh: Double) -> Step? {
        let frame = Frame(time: frameTime, late: frameTime > interval)
        if recent.count < settings.window {
            recent.append(frame)
        } else {
            if recent[nextSlot].late { lateCount -= 1 }
            recent[nextSlot] = frame
            nextSlot = (nextSlot + 1) % settings.window
        }
        if frame.late { lateCount += 1 }

        if recent.count == settings.window && lateCount >= settings.overrunsToStepDown,
            let lower = nextLowerRate(below: callbackRate, refresh: refresh)
        {
            stepUpTargets.append(ceiling ?? callbackRate)
            ceiling = lower
            forgetFrames()
            return .down(to: lower)
        }
        guard let target = stepUpTargets.last else { return nil }
        if frameTime <= Self.interval(of: target) {
            fitStreak += 1
        } else {
            fitStreak = 0
        }
        guard fitStreak >= settings.framesToStepUp else { return nil }
        stepUpTargets.removeLast()
        ceiling = stepUpTargets.isEmpty ? nil : target
        forgetFrames()
        return .up(to: ceiling)
    }

    /// Starts measuring afresh (the link's range or pause changed), keeping the hold.
    public mutating func forgetFrames() {
        recent.removeAll(keepingCapacity: true)
        nextSlot = 0
        lateCount = 0
        fitStreak = 0
    }

    /// The highest `refresh / n` below `callbackRate` that the recent frames fit, not below
    /// ``Settings/lowestRate``; the lowest such rate when none fits; `nil` when there is none.
    private func nextLowerRate(below callbackRate: Double, refresh: Double) -> Double? {
        guard refresh > 0, callbackRate > 0 else { return nil }
        // The first divisor whose rate is below the callback rate.
        var divisor = Swift.max(2, Int(Swift.min((refresh / callbackRate).rounded(.down), 1e6)) + 1)
        var lowest: Double?
        while true {
            let rate = refresh / Double(divisor)
            guard FrameRateMath.lessOrEqual(settings.lowestRate, rate) else { break }
            if rate < callbackRate && !FrameRateMath.equal(rate, callbackRate) {
                lowest = rate
                let interval = Self.interval(of: rate)
                let late = recent.count { $0.time > interval }
                if late < settings.overrunsToStepDown { return rate }
            }
            divisor += 1
        }
        return lowest
    }

    /// `1 / rate` as a duration.
    static func interval(of rate: Double) -> Duration {
        .nanoseconds(Int64((1e9 / rate).rounded()))
    }
}

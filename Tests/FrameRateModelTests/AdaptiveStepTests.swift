import FrameRateModel
import FrameRateTesting
import Testing

/// Adaptive links (`adaptive: true`): stepping down when frames keep missing their
/// deadline and back up with hysteresis, with exact frame counts and stepped time.
@Suite("Adaptive step-down")
struct AdaptiveStepTests {
    static let interval120 = Duration.nanoseconds(8_333_333)

    @Test("15 of the last 30 frames late steps 120 Hz at 12 ms a frame down to 60, not 80")
    func monitorStepsDownEvenly() {
        var monitor = OverrunMonitor()
        for frame in 1...29 {
            let step = monitor.record(frameTime: .milliseconds(12), interval: Self.interval120, callbackRate: 120, refresh: 120)
            #expect(step == nil, "frame \(frame)")
        }
        let step = monitor.record(frameTime: .milliseconds(12), interval: Self.interval120, callbackRate: 120, refresh: 120)
        #expect(step == .down(to: 60))
        #expect(monitor.ceiling == 60)
    }

    @Test("14 of 30 late is not enough")
    func belowHalfHolds() {
        var monitor = OverrunMonitor()
        for frame in 0..<90 {
            let time: Duration = frame % 30 < 14 ? .milliseconds(12) : .milliseconds(5)
            #expect(monitor.record(frameTime: time, interval: Self.interval120, callbackRate: 120, refresh: 120) == nil)
        }
        #expect(monitor.ceiling == nil)
    }

    @Test("frames too slow for 60 Hz go to the next even rate they fit: 40 Hz at 20 ms")
    func skipsToFittingRate() {
        var monitor = OverrunMonitor()
        var last: OverrunMonitor.Step?
        for _ in 0..<30 { last = monitor.record(frameTime: .milliseconds(20), interval: Self.interval120, callbackRate: 120, refresh: 120) }
        #expect(last == .down(to: 40))
    }

    @Test("60 consecutive fitting frames step back up; a slow frame restarts the count")
    func stepsUpWithHysteresis() {
        var monitor = OverrunMonitor()
        for _ in 0..<30 { _ = monitor.record(frameTime: .milliseconds(12), interval: Self.interval120, callbackRate: 120, refresh: 120) }
        #expect(monitor.ceiling == 60)
        let interval60 = Duration.nanoseconds(16_666_667)
        for _ in 0..<59 { #expect(monitor.record(frameTime: .milliseconds(5), interval: interval60, callbackRate: 60, refresh: 120) == nil) }
        // One frame that would not have fit 120 Hz restarts the count.
        #expect(monitor.record(frameTime: .milliseconds(10), interval: interval60, callbackRate: 60, refresh: 120) == nil)
        for _ in 0..<59 { #expect(monitor.record(frameTime: .milliseconds(5), interval: interval60, callbackRate: 60, refresh: 120) == nil) }
        #expect(monitor.record(frameTime: .milliseconds(5), interval: interval60, callbackRate: 60, refresh: 120) == .up(to: nil))
        #expect(monitor.ceiling == nil)
    }

    /// Runs the display vsync by vsync for `seconds`; the client finishes each frame
    /// `frameTime` after its tick (the link's first frame: 1 ms) and reports it then (before
    /// any vsync after that instant).
    /// - Returns: the reports, and each step with the instant it happened.
    static func run(
        _ harness: inout Harness, link: LinkID, frameTime: Duration, seconds: Double
    ) throws -> (reports: [VsyncReport<ManualClock.Instant>], steps: [(OverrunMonitor.Step, ManualClock.Instant)]) {
        try run(&harness, link: link, frameTime: { _ in frameTime }, seconds: seconds)
    }

    /// As above, with the frame time chosen by the number of steps so far; `beforeEachFrame`
    /// runs at the vsync before each frame's report, with the instant of that report.
    static func run(
        _ harness: inout Harness, link: LinkID, frameTime: (_ stepsSoFar: Int) -> Duration, seconds: Double,
        beforeEachFrame: (inout Harness, _ reportAt: ManualClock.Instant) throws -> Void = { _, _ in }
    ) throws -> (reports: [VsyncReport<ManualClock.Instant>], steps: [(OverrunMonitor.Step, ManualClock.Instant)]) {
        let end = harness.clock.now.advanced(by: .seconds(seconds))
        var pending: (sequence: UInt64, at: ManualClock.Instant)?
        var reports: [VsyncReport<ManualClock.Instant>] = []
        var steps: [(OverrunMonitor.Step, ManualClock.Instant)] = []
        while true {
            let next = try harness.compositor.nextVsync(of: harness.display)
            guard next <= end else { break }
            if let frame = pending, frame.at <= next {
                try beforeEachFrame(&harness, frame.at)
                harness.clock.advance(to: frame.at)
                if let step = try harness.compositor.frameFinished(link: link, owner: harness.owner, sequence: frame.sequence, at: frame.at) {
                    steps.append((step, frame.at))
                }
                pending = nil
            }
            let vsync = try harness.compositor.nextVsync(of: harness.display)
            harness.clock.advance(to: vsync)
            let report = try harness.compositor.vsync(of: harness.display, at: vsync)
            reports.append(report)
            // The link's very first frame takes 1 ms, so the daemon knows from the second
            // vsync on that the client paces itself with reports (and skips while it draws).
            if let tick = report.ticks.first {
                #expect(pending == nil, "a tick arrived while the client was still drawing")
                pending = (tick.sequence, tick.timestamp.advanced(by: tick.sequence == 1 ? .milliseconds(1) : frameTime(steps.count)))
            }
        }
        harness.clock.advance(to: end)
        return (reports, steps)
    }

    static func register(_ harness: inout Harness, adaptive: Bool) throws -> LinkID {
        let range = try FrameRateRange(minimum: 120, maximum: 120, preferred: 120)
        return try harness.compositor.register(
            owner: harness.owner,
            configuration: DisplayLinkConfiguration(range: range, hasHighFrameRateEntitlement: true, isAdaptive: adaptive),
            at: harness.clock.now
        ).link
    }

    @Test("an adaptive link at 12 ms a frame (tick to FrameDone) steps to 60 Hz on its 30th frame; decision.limited says overrun")
    func compositorStepsDown() throws {
        var harness = Harness()
        let link = try Self.register(&harness, adaptive: true)
        let (reports, steps) = try Self.run(&harness, link: link, frameTime: .milliseconds(12), seconds: 1)
        let (step, steppedAt) = try #require(steps.first)
        #expect(steps.count == 1)
        #expect(step == .down(to: 60))
        // Frames before the step: every tick up to the one whose frame stepped it.
        let ticksBefore = reports.flatMap(\.ticks).filter { $0.timestamp < steppedAt }
        #expect(ticksBefore.count == 30)  // the 1 ms first frame, then 29 late ones
        let decision = try harness.compositor.decision(of: harness.display)
        #expect(decision.limited == [LinkLimit(link: link, by: .overrun, wanted: 120, got: 60)])
        #expect(decision.rate == 60)
        #expect(decision.reason.contains("kept missing their deadline"))
        // The link's callbacks drop to 60 at once; the panel after the dwell from the step.
        let after = reports.filter { $0.vsync > steppedAt }
        #expect(after.flatMap(\.ticks).allSatisfy { $0.callbackRate == 60 })
        let drop = try #require(after.first { $0.rateChange?.to == 60 })
        #expect(drop.vsync >= steppedAt.advanced(by: .milliseconds(250)))
        #expect(drop.vsync < steppedAt.advanced(by: .milliseconds(250)).advanced(by: .seconds(1.0 / 120)))
    }

    @Test("a step whose frame comes just after another link's boost ended: the arbitration at the boost's end counts the new ceiling")
    func stepAfterAnExpiredBoost() throws {
        var harness = Harness()
        let link = try Self.register(&harness, adaptive: true)
        let other = try harness.register(30, 30, 30).link
        var boosts = 0
        // Before every frame report, the other link gets a boost that ends just before the
        // report: the display ends it (and re-arbitrates) as it takes the frame.
        let (_, steps) = try Self.run(&harness, link: link, frameTime: { _ in .milliseconds(12) }, seconds: 1) { harness, reportAt in
            let now = harness.clock.now
            _ = try harness.compositor.boost(
                link: other, owner: harness.owner, duration: now.duration(to: reportAt) - .microseconds(100),
                range: try FrameRateRange(minimum: 30, maximum: 30, preferred: 30), at: now
            )
            boosts += 1
        }
        #expect(boosts >= 30)
        let (step, _) = try #require(steps.first)
        #expect(step == .down(to: 60))
        let decision = try harness.compositor.decision(of: harness.display)
        #expect(decision.limited == [LinkLimit(link: link, by: .overrun, wanted: 120, got: 60)])
        #expect(decision.rate == 60)
    }

    @Test("stepped down, 60 consecutive frames that fit 120 Hz take it back up")
    func compositorStepsBackUp() throws {
        var harness = Harness()
        let link = try Self.register(&harness, adaptive: true)
        // 12 ms a frame until the step down, then 5 ms (fits 120 Hz's 8.3 ms).
        let (reports, steps) = try Self.run(&harness, link: link, frameTime: { $0 == 0 ? .milliseconds(12) : .milliseconds(5) }, seconds: 3)
        try #require(steps.count == 2)
        let (down, downAt) = steps[0]
        let (up, upAt) = steps[1]
        #expect(down == .down(to: 60))
        #expect(up == .up(to: nil))
        // The tick whose frame stepped it down was drawn at 12 ms; the next 60 at 5 ms.
        #expect(reports.flatMap(\.ticks).filter { $0.timestamp > downAt && $0.timestamp < upAt }.count == 60)
        #expect(try harness.compositor.decision(of: harness.display).limited.isEmpty)
        #expect(harness.refreshRate == 120)
    }

    @Test("a non-adaptive link's overruns are skipped intervals, its rate stays")
    func nonAdaptiveSkips() throws {
        var harness = Harness()
        let link = try Self.register(&harness, adaptive: false)
        let (reports, steps) = try Self.run(&harness, link: link, frameTime: .milliseconds(12), seconds: 1)
        #expect(steps.isEmpty)
        let ticks = reports.flatMap(\.ticks)
        #expect(ticks.count >= 55)
        #expect(ticks.dropFirst(2).allSatisfy { $0.skipped == 1 && $0.callbackRate == 120 })
        #expect(try harness.compositor.decision(of: harness.display).limited.isEmpty)
        #expect(harness.refreshRate == 120)
    }
}

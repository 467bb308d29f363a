import Testing

@testable import FrameRateClient

/// A 120 Hz tick: timestamp `base + interval / 120`.
private func at(_ interval: Double, base: Double = 100) -> Double { base + interval / 120 }

@Suite("TickSequencer: the application's sequence and skipped across re-registrations")
struct TickSequencerTests {
    @Test("before any reconnect the daemon's numbers pass through unchanged")
    func identity() {
        var sequencer = TickSequencer()
        let mapped = [(1, 0), (2, 0), (5, 2), (6, 0)].map { sequence, skipped in
            sequencer.map(sequence: UInt64(sequence), timestamp: at(Double(sequence)), callbackRate: 120, skipped: UInt64(skipped))
        }
        #expect(mapped.map(\.sequence) == [1, 2, 5, 6])
        #expect(mapped.map(\.skipped) == [0, 0, 2, 0])
        #expect(sequencer.daemonSequence(forApplicationSequence: 5) == 5)
        #expect(sequencer.daemonSequence(forApplicationSequence: 0) == 0)
    }

    @Test("after a reconnect: one gap of max(1, round(Δt · rate) − 1), then a constant offset")
    func reconnectGap() {
        var sequencer = TickSequencer()
        for sequence in 1...3 { _ = sequencer.map(sequence: UInt64(sequence), timestamp: at(Double(sequence)), callbackRate: 120, skipped: 0) }
        sequencer.reregistering(paused: false)
        // Waiting for the new daemon's first tick: any FrameDone goes out as 0.
        #expect(sequencer.daemonSequence(forApplicationSequence: 3) == 0)
        // The new daemon's first tick comes 0.5 s (60 intervals) after the last one: 59 skipped.
        let gap = sequencer.map(sequence: 1, timestamp: at(3) + 0.5, callbackRate: 120, skipped: 0)
        #expect(gap == .init(sequence: 63, skipped: 59))
        let next = sequencer.map(sequence: 2, timestamp: at(3) + 0.5 + 1.0 / 120, callbackRate: 120, skipped: 0)
        #expect(next == .init(sequence: 64, skipped: 0))
        // The daemon's own skips after that pass through, offset.
        let late = sequencer.map(sequence: 5, timestamp: at(3) + 0.5 + 4.0 / 120, callbackRate: 120, skipped: 2)
        #expect(late == .init(sequence: 67, skipped: 2))
        // FrameDone maps back; sequences from before the re-registration map to 0.
        #expect(sequencer.daemonSequence(forApplicationSequence: 63) == 1)
        #expect(sequencer.daemonSequence(forApplicationSequence: 67) == 5)
        #expect(sequencer.daemonSequence(forApplicationSequence: 3) == 0)
        #expect(sequencer.daemonSequence(forApplicationSequence: 62) == 0)
    }

    @Test("the gap formula: at least 1, rounding half away from zero, the new tick's rate")
    func formula() {
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 10.001, callbackRate: 120) == 1)
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 9, callbackRate: 120) == 1)
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 10 + 2.5 / 120, callbackRate: 120) == 2)  // round(2.5) = 3
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 10 + 2.49 / 120, callbackRate: 120) == 1)
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 12, callbackRate: 60) == 119)
        #expect(TickSequencer.skippedIntervals(previous: 10, next: .infinity, callbackRate: 60) == 1)
        #expect(TickSequencer.skippedIntervals(previous: 10, next: 11, callbackRate: .nan) == 1)
        // The new tick's callback rate counts: a link that came back at 60 Hz after 1 s.
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 7, timestamp: 50, callbackRate: 120, skipped: 0)
        sequencer.reregistering(paused: false)
        #expect(sequencer.map(sequence: 1, timestamp: 51, callbackRate: 60, skipped: 0) == .init(sequence: 67, skipped: 59))
    }

    @Test("the daemon's skipped on the first new tick is not added to the gap")
    func daemonSkipOnFirstTick() {
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 10, timestamp: at(10), callbackRate: 120, skipped: 0)
        sequencer.reregistering(paused: false)
        #expect(sequencer.map(sequence: 4, timestamp: at(30), callbackRate: 120, skipped: 3) == .init(sequence: 30, skipped: 19))
        #expect(sequencer.map(sequence: 5, timestamp: at(31), callbackRate: 120, skipped: 0) == .init(sequence: 31, skipped: 0))
    }

    @Test("a link re-registered paused resumes like any resume: skipped 0, sequence + 1")
    func pausedLink() {
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 4, timestamp: at(4), callbackRate: 120, skipped: 0)
        sequencer.reregistering(paused: true)
        #expect(sequencer.map(sequence: 1, timestamp: at(4) + 30, callbackRate: 120, skipped: 0) == .init(sequence: 5, skipped: 0))
        #expect(sequencer.map(sequence: 2, timestamp: at(5) + 30, callbackRate: 120, skipped: 0) == .init(sequence: 6, skipped: 0))
    }

    @Test("pausing before the first new tick turns the gap into a resume; a later reconnect keeps it")
    func pausedAfterReregistering() {
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 4, timestamp: at(4), callbackRate: 120, skipped: 0)
        sequencer.reregistering(paused: false)
        sequencer.paused()
        // Another outage before any tick, registered unpaused this time: the pause still counts.
        sequencer.reregistering(paused: false)
        #expect(sequencer.map(sequence: 1, timestamp: at(4) + 9, callbackRate: 120, skipped: 0) == .init(sequence: 5, skipped: 0))
    }

    @Test("two outages without a tick between: the gap runs from the last delivered tick")
    func twoOutages() {
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 2, timestamp: at(2), callbackRate: 120, skipped: 0)
        sequencer.reregistering(paused: false)
        sequencer.reregistering(paused: false)
        #expect(sequencer.map(sequence: 1, timestamp: at(12), callbackRate: 120, skipped: 0) == .init(sequence: 12, skipped: 9))
    }

    @Test("a link that never delivered a tick keeps the new daemon's numbers")
    func neverTicked() {
        var sequencer = TickSequencer()
        sequencer.reregistering(paused: false)
        #expect(sequencer.daemonSequence(forApplicationSequence: 0) == 0)
        #expect(sequencer.map(sequence: 1, timestamp: 5, callbackRate: 120, skipped: 0) == .init(sequence: 1, skipped: 0))
        #expect(sequencer.daemonSequence(forApplicationSequence: 1) == 1)
    }

    @Test("pausing with no re-registration pending changes nothing")
    func pauseInSession() {
        var sequencer = TickSequencer()
        _ = sequencer.map(sequence: 1, timestamp: at(1), callbackRate: 120, skipped: 0)
        sequencer.paused()
        #expect(sequencer.gap == .none)
        #expect(sequencer.map(sequence: 2, timestamp: at(50), callbackRate: 120, skipped: 0) == .init(sequence: 2, skipped: 0))
    }
}

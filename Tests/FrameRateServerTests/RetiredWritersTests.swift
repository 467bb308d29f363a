import FrameRateModel
import FrameRatePosix
@testable import FrameRateServer
import FrameRateProtocol
import Synchronization
import Testing

/// A closed connection's writer outlives every tick batch built while it was in the table,
/// since the tick plane holds writers unretained while it sends.
@Suite struct RetiredWritersTests {
    static func writer() -> SocketWriter {
        SocketWriter(destination: .sink({ _ in }), highWater: 1 << 20)
    }

    @Test func aWriterIsReleasedOnlyOnceTheLastBatchBuiltBeforeItLeftIsSent() {
        var retired = RetiredWriters()
        let first = Self.writer()
        let second = Self.writer()
        retired.retire(first, lastBatch: 4)
        retired.retire(second, lastBatch: 7)
        #expect(retired.release(sentThrough: 3).isEmpty)
        #expect(retired.release(sentThrough: 4).map(ObjectIdentifier.init) == [ObjectIdentifier(first)])
        #expect(retired.count == 1)
        #expect(retired.release(sentThrough: 6).isEmpty)
        #expect(retired.release(sentThrough: .max).map(ObjectIdentifier.init) == [ObjectIdentifier(second)])
        #expect(retired.count == 0)
    }

    @Test func aWriterRemovedBeforeAnyBatchIsFreeAtOnce() {
        var retired = RetiredWriters()
        retired.retire(Self.writer(), lastBatch: 0)
        #expect(retired.release(sentThrough: 0).count == 1)
    }

    @Test func theDaemonStateKeepsARemovedWriterAliveUntilItsBatchesAreSent() {
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        var state = CompositorCore.initialState(configuration: ServerConfiguration(listener: .path("/nonexistent")), start: start, watchdogInterval: nil)
        let owner = OwnerID(rawValue: 1 << 32 | 1)
        weak var gone: SocketWriter?
        do {
            let writer = Self.writer()
            gone = writer
            state.addWriter(writer, for: owner)
        }
        #expect(state.writers.unretained(owner) != nil)
        let batch = state.beginBatch()  // a batch that may name the writer, not sent yet
        #expect(state.removeWriter(of: owner).isEmpty)
        #expect(state.writers[owner] == nil)
        #expect(state.retiredWriterCount == 1)
        #expect(gone != nil)
        #expect(state.releaseWriters().isEmpty)
        #expect(gone != nil)
        state.progress.leaderSent.store(batch, ordering: .releasing)  // the leader sent it
        do {
            let released = state.releaseWriters()
            #expect(released.count == 1)
        }
        #expect(state.retiredWriterCount == 0)
        #expect(gone == nil)  // the last reference went with `released`
    }

    @Test func withNoBatchInFlightAClosedWritersIsLetGoAtOnce() {
        // An idle daemon's tick plane may never wake again: connection churn must not pile up writers.
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        var state = CompositorCore.initialState(configuration: ServerConfiguration(listener: .path("/nonexistent")), start: start, watchdogInterval: nil)
        for generation in 1...100 as ClosedRange<UInt64> {
            let owner = OwnerID(rawValue: generation << 32 | 1)
            state.addWriter(Self.writer(), for: owner)
            #expect(state.removeWriter(of: owner).count == 1)
        }
        #expect(state.retiredWriterCount == 0)
    }

    @Test func aBusyHelperHoldsBackOnlyTheBatchesItHasNotSent() {
        let progress = FanOutProgress(helpers: 2)
        progress.leaderSent.store(9, ordering: .releasing)
        #expect(progress.sentThrough == 9)  // helpers idle: nothing held back
        progress.helpers[1].submitted.store(7, ordering: .releasing)
        progress.helpers[1].sent.store(5, ordering: .releasing)
        #expect(progress.sentThrough == 5)  // batches 6 and 7 still queued on helper 1
        progress.helpers[1].sent.store(7, ordering: .releasing)
        #expect(progress.sentThrough == 9)
    }
}

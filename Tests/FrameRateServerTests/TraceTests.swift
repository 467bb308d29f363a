import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// `Compositor/Trace`: the records a connection is sent, the flush, the limits.
@Suite struct TraceTests {
    static func records(_ lines: [String]) throws -> [TraceRecordsNotification] {
        try lines.filter { $0.contains(V1Method.traceRecords.rawValue) }.map {
            try TraceRecordsNotification(json: notificationParams($0, .traceRecords))
        }
    }

    @Test func aTraceRecordsTicksVsyncsDecisionsAndPresents() throws {
        let server = ServerHarness()
        let tracer = try server.connect(Peers.user)
        let started = try tracer.result(.trace)
        let trace = try #require(started["trace"]?.int64Value)
        #expect(started["state"]?["displays"]?[0]?["id"] == 0)
        let app = try server.connect()
        let link = try app.register(60, 60, 60, extra: #","label":"traced""#)
        var ticks: [TickNotification] = []
        for _ in 0..<6 {
            try server.runNextVsync()
            ticks += try app.lines().filter { $0.contains("/Tick") }.map { try TickNotification(json: notificationParams($0, .tick)) }
        }
        let last = try #require(ticks.last)
        try app.send(notificationLine(.present, #"{"link":\#(link),"sequence":\#(last.sequence)}"#))
        try server.runNextVsync()
        // The flush runs every 100 ms on the control loop.
        server.loop.advanceTime(by: .milliseconds(100))
        var batches = try Self.records(tracer.lines())
        #expect(!batches.isEmpty)
        _ = try tracer.result(.stopTrace, #"{"trace":\#(trace)}"#)
        batches += try Self.records(tracer.lines())
        let records = batches.flatMap(\.records)
        #expect(batches.allSatisfy { $0.trace == UInt64(trace) && $0.lost == 0 })
        let traced = records.compactMap { record -> UInt64? in
            if case .tick(_, let tickLink, let sequence, _, _, _, _) = record, tickLink.rawValue == link { return sequence }
            return nil
        }
        // Every tick delivered while tracing, once (the 7th vsync's tick too).
        #expect(Array(traced.prefix(ticks.count)) == ticks.map(\.sequence))
        // The tracer is another user: it sees the link, not its holder or label.
        #expect(records.contains { if case .linkAdded(_, _, let state) = $0 { state.peer == nil && state.label == nil } else { false } })
        #expect(!records.contains { if case .decision(_, _, _, _, let reason, _) = $0 { reason.contains("traced") } else { false } })
        #expect(records.contains { if case .decision = $0 { true } else { false } })
        #expect(records.contains { if case .present(_, _, let sequence, _) = $0 { sequence == last.sequence } else { false } })
        #expect(records.contains { if case .presented(_, let frame) = $0 { frame.sequence == last.sequence } else { false } })
        #expect(records.filter { if case .vsync = $0 { true } else { false } }.count >= traced.count)
        // Stopped: nothing more is recorded or sent.
        try server.runNextVsync()
        server.loop.advanceTime(by: .milliseconds(200))
        #expect(try Self.records(tracer.lines()).isEmpty)
        #expect(!server.shared.tracer.isActive)
    }

    @Test("a flush writes a bounded number of records a loop turn; the rest follow 1 ms later, in order, none lost, and StopTrace sends what is left first")
    func aFlushIsBoundedAndTheRestFollows() throws {
        let server = ServerHarness()
        let tracer = try server.connect(Peers.root)
        let trace = try #require(try tracer.result(.trace)["trace"]?.int64Value)
        // 64 links at 120 Hz for 40 vsyncs: 2,560 tick records and 40 vsyncs, more than a turn's share.
        let app = try server.connect(Peers.root)
        for _ in 0..<64 { _ = try app.register(120, 120, 120, extra: #","highFrameRate":true"#) }
        for _ in 0..<40 { try server.runNextVsync() }
        _ = try app.lines()
        _ = try tracer.lines()

        server.core.flushTraces()
        let first = try Self.records(tracer.lines()).flatMap(\.records)
        #expect(first.count == CompositorCore.traceRecordsPerTurn)
        // The rest goes out at the next turn, 1 ms later, after the loop served its sockets.
        server.loop.advanceTime(by: .milliseconds(1))
        let rest = try Self.records(tracer.lines())
        #expect(!rest.isEmpty && rest.allSatisfy { $0.lost == 0 })
        let ticks = (first + rest.flatMap(\.records)).compactMap { record -> (UInt64, UInt64)? in
            if case .tick(_, let link, let sequence, _, _, _, _) = record { return (link.rawValue, sequence) }
            return nil
        }
        #expect(ticks.count == 64 * 40)
        // Each link's ticks in order, every one once.
        for link in Set(ticks.map(\.0)) {
            #expect(ticks.filter { $0.0 == link }.map(\.1) == Array(1...40).map(UInt64.init))
        }

        // Another 40 vsyncs and one bounded flush, then StopTrace: the backlog the flush
        // left comes before its reply, then nothing more.
        for _ in 0..<40 { try server.runNextVsync() }
        server.core.flushTraces()
        #expect(server.core.traceBacklogs[UInt64(trace)] != nil, "the flush left a backlog")
        try tracer.send(requestLine(V1Method.stopTrace.rawValue, #"{"trace":\#(trace)}"#, id: 99))
        let lines = try tracer.lines()
        let replyIndex = try #require(lines.firstIndex { $0.contains(#""id":99"#) })
        #expect(lines[replyIndex].contains(#""result""#))
        let before = try Self.records(Array(lines[..<replyIndex])).flatMap(\.records).filter { if case .tick = $0 { true } else { false } }
        #expect(before.count == 64 * 40, "\(before.count) tick records before the reply")
        #expect(try Self.records(Array(lines[(replyIndex + 1)...])).isEmpty)
        #expect(server.core.traceBacklogs.isEmpty)
        server.loop.advanceTime(by: .milliseconds(200))
        #expect(try Self.records(tracer.lines()).isEmpty)
    }

    @Test func oneTracePerConnectionAndOnlyItsOwnCanBeStopped() throws {
        let server = ServerHarness()
        let first = try server.connect(Peers.user)
        let trace = try #require(try first.result(.trace)["trace"]?.int64Value)
        #expect(try first.error(.trace).grpcStatus == .resourceExhausted)
        let other = try server.connect(Peers.user)
        #expect(try other.error(.stopTrace, #"{"trace":\#(trace)}"#).grpcStatus == .notFound)
        // An unprivileged user runs one trace at a time, across its connections; root is not limited so.
        let perUser = try other.error(.trace)
        #expect(perUser.grpcStatus == .resourceExhausted && perUser.message.contains("per-user"))
        let root = try server.connect(Peers.root)
        #expect(try root.result(.trace)["trace"]?.int64Value != nil)
        // Closing the connections ends their traces.
        first.close()
        root.close()
        #expect(!server.shared.tracer.isActive)
    }

    @Test("two rate changes in one late vsync are both traced, each at its own vsync, in order")
    func twoChangesInOneReportAreBothTraced() throws {
        // Zero decrease dwell: a decrease passed over by a late wake-up, then the drop at a
        // boost's end re-arbitrated at the vsync processed (as BoostTimingTests checks on
        // the model alone).
        let start = MonotonicClock.now
        var compositor = Compositor<MonotonicClock>(
            displays: [DisplayConfiguration(id: DisplayID(rawValue: 0))], governor: .init(decreaseDwell: .zero), start: start
        )
        let display = DisplayID(rawValue: 0)
        let owner = OwnerID(rawValue: 1)
        func register(_ minimum: Double, _ maximum: Double, _ preferred: Double, at now: MonotonicClock.Instant) throws -> LinkID {
            let range = try FrameRateRange(minimum: minimum, maximum: maximum, preferred: preferred)
            let configuration = DisplayLinkConfiguration(range: range, isPaused: false, hasHighFrameRateEntitlement: true)
            return try compositor.register(owner: owner, configuration: configuration, at: now).link
        }
        let holder = try register(120, 120, 120, at: start)
        _ = try register(10, 120, 30, at: start)
        let booster = try register(10, 120, 30, at: start)
        var now = start
        for _ in 0..<12 {
            now = try compositor.nextVsync(of: display)
            _ = try compositor.vsync(of: display, at: now, canDeliver: { _ in true })
        }
        _ = try compositor.boost(
            link: booster, owner: owner, duration: .milliseconds(30), range: try FrameRateRange(minimum: 80, maximum: 80, preferred: 80), at: now
        )
        _ = try compositor.update(link: holder, owner: owner, paused: true, at: now)
        let decreaseDue = try compositor.nextVsync(of: display)
        let late = try compositor.vsync(of: display, at: decreaseDue.advanced(by: .milliseconds(52)), canDeliver: { _ in true })
        try #require(late.rateChanges.count == 2)

        let records = TraceRecorder.records(of: late)
        let heads = records.prefix(6).map { record -> String in
            switch record {
            case .vsync(_, let at): "vsync \(at)"
            case .rateChange(_, let at, let from, let to): "rate \(at) \(from)->\(to)"
            case .decision(_, let at, let rate, _, _, _): "decision \(at) \(rate)"
            default: "other"
            }
        }
        #expect(
            heads == [
                "rate \(decreaseDue.seconds) 120.0->80.0", "decision \(decreaseDue.seconds) 80.0", "vsync \(late.vsync.seconds)",
                "rate \(late.vsync.seconds) 80.0->30.0", "decision \(late.vsync.seconds) 30.0", "other",
            ]
        )
    }

    @Test("recording appends to each trace's buffer in place, full or not, with two traces running")
    func recordingAppendsInPlace() throws {
        // Each append copied the whole buffer when the recorder changed its dictionary while
        // walking its keys: a full buffer (a trace never read) was copied every vsync.
        let recorder = TraceRecorder()
        recorder.start(1)
        recorder.start(2)
        let record = TraceRecord.vsync(display: DisplayID(rawValue: 0), at: 1)
        recorder.record(Array(repeating: record, count: 100))
        recorder.record([record])
        // The array grew past its 101 records: appends that fit there stay there.
        let (first, capacity) = try #require(recorder.storage(of: 1))
        try #require(capacity > 101)
        recorder.record(Array(repeating: record, count: capacity - 101))
        #expect(try #require(recorder.storage(of: 1)).address == first)
        // Filled to the limit, then more: the records stay where they are, the rest is lost.
        for _ in 0..<(TraceRecorder.capacity / 1000 + 1) { recorder.record(Array(repeating: record, count: 1000)) }
        let full = try #require(recorder.storage(of: 2))
        for _ in 0..<3 { recorder.record(Array(repeating: record, count: 1000)) }
        #expect(try #require(recorder.storage(of: 2)).address == full.address)
        let drained = recorder.drain(2)
        #expect(drained.records.count == TraceRecorder.capacity)
        #expect(drained.lost >= 3000)
    }
}

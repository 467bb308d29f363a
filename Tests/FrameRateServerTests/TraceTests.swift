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
}

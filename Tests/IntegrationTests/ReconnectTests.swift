import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// Reads `stream` until `done` holds for what was read (or the stream finishes);
/// fails after `timeout`, a guard against a hang (readiness is the ticks arriving).
private func read<Element: Sendable>(
    _ stream: AsyncStream<Element>, timeout: Duration = .seconds(20), until done: @escaping @Sendable ([Element]) -> Bool
) async throws -> [Element] {
    try await withThrowingTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var read: [Element] = []
            for await element in stream {
                read.append(element)
                if done(read) { break }
            }
            return read
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return try #require(first, "nothing satisfied the condition within \(timeout)")
    }
}

/// Polls `condition` every 5 ms until it holds, failing after `timeout`.
private func waitUntil(timeout: Duration = .seconds(20), _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(what) did not happen within \(timeout)")
            throw Daemon.DaemonError.notAnswering
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Checks `sequence == previous.sequence + skipped + 1` across `ticks`.
private func expectContinuous(_ ticks: [TickNotification], sourceLocation: SourceLocation = #_sourceLocation) {
    for (previous, tick) in zip(ticks, ticks.dropFirst()) {
        #expect(tick.sequence == previous.sequence + tick.skipped + 1, "\(previous.sequence) → \(tick.sequence) skipped \(tick.skipped)", sourceLocation: sourceLocation)
    }
}

/// A reconnecting client across real daemon restarts on the same socket.
/// Serialized: the machine has two cores and these tests count ticks.
@Suite("reconnect across a daemon restart", .serialized)
struct ReconnectTests {
    static let fast = try! FrameRateRange(minimum: 80, maximum: 120, preferred: 120)

    @Test("SIGTERM and a new daemon on the same socket: the same tick stream goes on with one gap; the link is back as it was")
    func restart() async throws {
        let first = try await Daemon.start()
        defer { first.kill() }
        let connection = try await FrameRateConnection.connect(socketPath: first.socket, reconnect: .default)
        let link = try await connection.register(range: Self.fast, label: "scroller", highFrameRate: true, tickBufferLimit: 4096)
        let gone = try await connection.register(range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 30), label: "gone")
        try await gone.invalidate()
        let before = try await read(link.ticks) { $0.count == 5 }

        #expect(await first.stop() == 0)
        let stoppedAt = MonotonicClock.now.seconds
        #expect(link.end == nil, "\(String(describing: link.end))")
        let second = try await Daemon.start(socket: first.socket)
        defer { second.kill() }
        let after = try await read(link.ticks) { ticks in ticks.filter { $0.timestamp > stoppedAt }.count >= 10 }
        let ticks = before + after

        // One stream, one application id, continuous sequences, a gap at the restart.
        #expect(ticks.allSatisfy { $0.link == link.id })
        expectContinuous(ticks)
        // The restart is the gap at the first tick after the stop. A loaded machine may add a
        // skipped tick or two elsewhere (counted in `skipped`, so the sequence stays continuous).
        let gapIndex = try #require(ticks.firstIndex { $0.timestamp > stoppedAt })
        let gap = (offset: gapIndex, element: ticks[gapIndex])
        #expect(gapIndex > 0 && gap.element.skipped >= 1, "gap: \(gap.element.sequence) skipped \(gap.element.skipped)")
        let elsewhere = ticks.enumerated().filter { $0.offset != gapIndex }.reduce(0) { $0 + $1.element.skipped }
        #expect(elsewhere <= 3, "\(elsewhere) ticks skipped away from the restart")
        let previous = ticks[gap.offset - 1]
        #expect(previous.timestamp < stoppedAt)
        let expected = max(1, ((gap.element.timestamp - previous.timestamp) * gap.element.callbackRate).rounded() - 1)
        #expect(Double(gap.element.skipped) == expected)
        #expect(link.end == nil)
        #expect(connection.reconnectCount == 1 && connection.isConnected && !connection.isClosed)

        // The new daemon has the link as registered: range, label, entitlement; not the invalidated one.
        let observer = try await second.connect()
        let state = try await observer.state()
        let links = state.displays[0].links
        #expect(links.count == 1)
        let restored = try #require(links.first)
        #expect(restored.range == Self.fast)
        #expect(restored.label == "scroller")
        #expect(restored.highFrameRate)
        #expect(!restored.paused)
        #expect(restored.peer?.pid == getpid())
        #expect(link.daemonID == restored.link)
        #expect(state.displays[0].refreshRate == 120)

        // Operations use the new daemon's id: a pause shows there.
        try await link.pause()
        _ = try await observer.waitForState { $0.displays[0].links.first?.paused == true }
        await observer.close()
        await connection.close()
        #expect(link.end == .connectionClosed)
        #expect(await second.stop() == 0)
    }

    @Test("a paused link is registered again paused: no ticks until resumed, then sequence + 1 with nothing skipped")
    func pausedLink() async throws {
        let first = try await Daemon.start()
        defer { first.kill() }
        let connection = try await FrameRateConnection.connect(socketPath: first.socket, reconnect: .default)
        let link = try await connection.register(range: Self.fast, label: "paused", highFrameRate: true, tickBufferLimit: 4096)
        let before = try await read(link.ticks) { $0.count == 3 }
        try await link.pause()
        let pausedAt = MonotonicClock.now.seconds

        #expect(await first.stop() == 0)
        let second = try await Daemon.start(socket: first.socket)
        defer { second.kill() }
        let observer = try await second.connect()
        let state = try await observer.waitForState { $0.displays[0].links.count == 1 }
        let restored = try #require(state.displays[0].links.first)
        #expect(restored.paused && restored.range == Self.fast && restored.label == "paused")
        try await waitUntil("the link's re-registration answer") { link.daemonID != nil }

        let resumedAt = MonotonicClock.now.seconds
        try await link.resume()
        let after = try await read(link.ticks) { ticks in ticks.filter { $0.timestamp > pausedAt }.count >= 5 }
        let ticks = before + after
        // Nothing ticked between the pause and the resume, across the restart.
        let fresh = ticks.filter { $0.timestamp > pausedAt }
        #expect(fresh.allSatisfy { $0.timestamp > resumedAt })
        let last = try #require(ticks.last { $0.timestamp <= pausedAt })
        let resumed = try #require(fresh.first)
        #expect(resumed.sequence == last.sequence + 1 && resumed.skipped == 0)
        expectContinuous(ticks)
        #expect(ticks.allSatisfy { $0.link == link.id })
        // Nothing is owed for the paused time; a loaded machine may skip a tick or two.
        #expect(ticks.reduce(0) { $0 + $1.skipped } <= 3)
        await observer.close()
        await connection.close()
    }

    @Test("a link the new daemon refuses ends with its error; the other links and a watch carry on")
    func refusedAndWatch() async throws {
        let first = try await Daemon.start(["--display", "promotion-phone", "--display", "fixed-60"])
        defer { first.kill() }
        let connection = try await FrameRateConnection.connect(socketPath: first.socket, reconnect: .default)
        let watch = try await connection.watch()
        let staying = try await connection.register(range: Self.fast, highFrameRate: true, tickBufferLimit: 4096)
        let refused = try await connection.register(
            range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 30), display: DisplayID(rawValue: 1), label: "second screen"
        )
        _ = try await read(staying.ticks) { $0.count == 2 }

        #expect(await first.stop() == 0)
        let stoppedAt = MonotonicClock.now.seconds
        let second = try await Daemon.start(socket: first.socket)  // one display only
        defer { second.kill() }

        for await _ in refused.ticks {}
        guard case .reregistrationFailed(let error)? = refused.end else {
            Issue.record("ended \(String(describing: refused.end))")
            return
        }
        #expect(error.status == .notFound, "\(error)")
        #expect(refused.end?.status == .notFound)
        let after = try await read(staying.ticks) { ticks in ticks.contains { $0.timestamp > stoppedAt } }
        #expect(after.last?.skipped ?? 0 >= 1)
        #expect(staying.end == nil)

        // The watch: a resynchronized event with the new daemon's state, then its events under the same id.
        let events = watch.events
        let resynchronized = try await read(events) { $0.contains { $0.kind == CompositorWatchEvent.resynchronizedKind } }
        let state = try #require(resynchronized.last?.resynchronizedState)
        #expect(state.displays.count == 1)
        let other = try await second.connect()
        let otherLink = try await other.register(range: try FrameRateRange(minimum: 10, maximum: 30), label: "other")
        let added = try await read(events) { $0.contains { $0.kind == "linkAdded" && $0.params["link"]?["label"]?.stringValue == "other" } }
        #expect(added.allSatisfy { $0.watch == watch.id })
        try await otherLink.invalidate()
        await other.close()
        await connection.close()
    }

    @Test("framectl register rides out a daemon restart: one gap, same link id, exit 0 on SIGINT")
    func framectlRegister() async throws {
        let first = try await Daemon.start()
        defer { first.kill() }
        let framectl = try TestProcess(
            executable: Paths.framectl,
            arguments: ["register", "--min", "80", "--max", "120", "--preferred", "120", "--high-frame-rate", "--json", "--socket", first.socket],
            stderrURL: first.directory.appendingPathComponent("framectl-register.log")
        )
        defer { framectl.signal(SIGKILL) }
        #expect(await framectl.firstLine { PrintedTick.parse([$0]).first?.sequence == 5 } != nil, "\(framectl.stderr)")
        #expect(await first.stop() == 0)
        let second = try await Daemon.start(socket: first.socket)
        defer { second.kill() }
        let gapLine = await framectl.firstLine { PrintedTick.parse([$0]).first.map { $0.skipped >= 1 } ?? false }
        let gap = try #require(gapLine.flatMap { PrintedTick.parse([$0]).first }, "\(framectl.stderr)")
        #expect(await framectl.firstLine { PrintedTick.parse([$0]).first?.sequence == gap.sequence + 5 } != nil)
        framectl.signal(SIGINT)
        #expect(await framectl.waitForExit() == 0, "\(framectl.stderr)")

        let registration = try JSONValue(parsing: try #require(framectl.output.first))
        let linkID = try #require(registration["link"]?.int64Value)
        let ticks = PrintedTick.parse(framectl.output)
        #expect(ticks.allSatisfy { $0.link == UInt64(linkID) })
        for (previous, tick) in zip(ticks, ticks.dropFirst()) {
            #expect(tick.sequence == previous.sequence + tick.skipped + 1)
        }
        // The restart's gap, and at most a load-induced skip or two besides.
        #expect(ticks.contains { $0.sequence == gap.sequence && $0.skipped >= 1 })
        #expect(ticks.filter { $0.sequence != gap.sequence }.reduce(0) { $0 + $1.skipped } <= 3)
        #expect(!framectl.stderr.contains("error"), "\(framectl.stderr)")
        #expect(await second.logShows("released (invalidated)"), "\(second.log)")
    }
}

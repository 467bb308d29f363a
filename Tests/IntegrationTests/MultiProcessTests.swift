import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// The daemon and several separate client processes against each other.
/// Serialized: the machine has two cores and these tests measure tick rates.
@Suite("framerated with real client processes", .serialized)
struct MultiProcessTests {
    @Test("three processes: refresh and callback rates are what the model predicts")
    func arbitrationAcrossProcesses() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let ranges: [(FrameRateRange, Bool)] = [
            (try FrameRateRange(minimum: 30, maximum: 60, preferred: 60), true),
            (try FrameRateRange(minimum: 15, maximum: 24, preferred: 24), true),
            (try FrameRateRange(minimum: 10, maximum: 120, preferred: 0), false),
        ]
        var clients: [TestProcess] = []
        for (index, (range, entitled)) in ranges.enumerated() {
            let client = try daemon.rawClient(
                "hold",
                ["--min", "\(range.minimum)", "--max", "\(range.maximum)", "--preferred", "\(range.preferred)", "--label", "p\(index)"]
                    + (entitled ? ["--entitled"] : [])
            )
            #expect(await client.firstLine { $0.contains("registered") } != nil)
            clients.append(client)
        }
        // The model's prediction for the same votes.
        let arbiter = Arbiter(profile: .promotionPhone)
        let votes = ranges.enumerated().map { LinkVote(link: LinkID(rawValue: UInt64($0.offset + 1)), range: $0.element.0, hasHighFrameRateEntitlement: $0.element.1) }
        let predicted = arbiter.decide(votes: votes, caps: DisplayCaps())
        #expect(predicted.refreshRate == 120)

        let observer = try await daemon.connect()
        let state = try await observer.waitForState { $0.displays[0].refreshRate == predicted.refreshRate }
        let display = state.displays[0]
        #expect(display.refreshRate == predicted.refreshRate)
        #expect(display.links.count == 3)
        for (vote, link) in zip(votes, display.links.sorted { $0.link < $1.link }) {
            let cadence = arbiter.cadence(of: vote.range, hasEntitlement: vote.hasHighFrameRateEntitlement, caps: DisplayCaps(), refresh: predicted.refreshRate)
            #expect(link.callbackRate == cadence.callbackRate, "link \(link.link)")
            #expect(link.peer?.command == "python3")
            #expect(link.peer?.pid == clients[Int(link.link.rawValue - 1)].pid)
        }
        // The reason names the rule, the link that keeps the rate from going lower, and the entitlement clamp.
        #expect(display.reason.contains("120 Hz is the lowest rate that serves every link exactly"))
        #expect(display.reason.contains("link 1 'p0' (30, 60, 60)"))
        #expect(display.reason.contains("link 3 'p2' (10, 120, 0) is limited to 60 Hz without the high-frame-rate entitlement"))
        for client in clients { client.signal(SIGKILL) }
        await observer.close()
    }

    @Test("ticks: rate within 5 %, strictly increasing, on one vsync grid across processes, target one interval ahead")
    func tickStreams() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let specs: [(min: Double, max: Double, preferred: Double)] = [(80, 120, 120), (30, 60, 60), (20, 24, 24)]
        let seconds = 2.0
        var clients: [TestProcess] = []
        for spec in specs {
            clients.append(
                try daemon.rawClient(
                    "ticks",
                    ["--min", "\(spec.min)", "--max", "\(spec.max)", "--preferred", "\(spec.preferred)", "--entitled", "--seconds", "\(seconds)"]
                )
            )
        }
        var all: [PrintedTick] = []
        for (spec, client) in zip(specs, clients) {
            #expect(await client.waitForExit() == 0)
            let ticks = PrintedTick.parse(client.output)
            let steady = ticks.filter { $0.refreshRate == 120 }
            let expected = spec.preferred * seconds
            #expect(abs(Double(ticks.count) - expected) <= max(expected * 0.05, 1), "\(spec): \(ticks.count) ticks, expected \(expected)")
            #expect(steady.allSatisfy { $0.callbackRate == spec.preferred })
            for (previous, tick) in zip(ticks, ticks.dropFirst()) {
                #expect(tick.timestamp > previous.timestamp)
                #expect(tick.sequence == previous.sequence + tick.skipped + 1)
            }
            for tick in ticks {
                #expect(abs((tick.targetTimestamp - tick.timestamp) - 1 / tick.callbackRate) < 2e-6)
                #expect(abs(tick.duration - 1 / tick.refreshRate) < 2e-6)
            }
            // An idle machine delivers every tick; a loaded 2-core CI machine may delay one now
            // and then, which the sequence rule above accounts for. More than 5 % (the rate
            // bound above) is a fault, but never less than two intervals: a vsync the tick
            // plane missed under load costs each link whose interval started there one skip,
            // and a fraction of a 24 Hz link's 48 ticks would allow almost none. (2 % flaked
            // once on the Intel VM, in a fresh-clone CI run: 5 of a 120 Hz link's 240 ticks.)
            let skipped = ticks.reduce(0) { $0 + $1.skipped }
            #expect(Double(skipped) <= max(expected * 0.05, 2), "\(spec): \(skipped) ticks skipped")
            all += steady
        }
        // One vsync grid: every 120 Hz timestamp, from any process, is a whole number of periods from any other.
        let reference = try #require(all.first).timestamp
        for tick in all {
            let periods = (tick.timestamp - reference) * 120
            #expect(abs(periods - periods.rounded()) < 1e-3, "timestamp \(tick.timestamp) is off the grid")
        }
        // Every tick arrived after its vsync, well within its frame budget on an idle machine.
        #expect(all.allSatisfy { $0.timestamp <= MonotonicClock.now.seconds })
    }

    @Test("kill -9 of a client releases its link within 100 ms")
    func killReleasesLink() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let observer = try await daemon.connect()
        let watch = try await observer.watch()
        var events = watch.events.makeAsyncIterator()
        let client = try daemon.rawClient("hold", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled"])
        #expect(await client.firstLine { $0.contains("registered") } != nil)
        while let event = await events.next(), event.kind != "linkAdded" {}
        let killedAt = ContinuousClock.now
        client.signal(SIGKILL)
        while let event = await events.next(), event.kind != "linkRemoved" {}
        let elapsed = ContinuousClock.now - killedAt
        #expect(elapsed < .milliseconds(100), "released after \(elapsed)")
        let state = try await observer.state()
        #expect(state.displays[0].links.isEmpty)
        await observer.close()
    }

    /// A client killed with nothing left unread ends its connection with a plain end of
    /// input; when a tick send failed just before, the session closed from inside NIO's
    /// read-complete callout and NIO's own half-close that follows tripped an assertion in
    /// debug builds, killing the daemon (found by the Python client tests, about one run
    /// in sixteen). Waves of such clients make the interleaving likely; the daemon under
    /// test is the debug build, so the assertion is armed.
    @Test("waves of clients killed while reading their ticks: the daemon stays up and releases every link")
    func killedReadersNeverTakeTheDaemonDown() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        for _ in 0..<4 {
            var clients: [TestProcess] = []
            for _ in 0..<25 {
                clients.append(try daemon.rawClient("hold", ["--min", "120", "--max", "120", "--preferred", "120", "--entitled"]))
            }
            for client in clients { #expect(await client.firstLine { $0.contains("registered") } != nil) }
            for client in clients { client.signal(SIGKILL) }
            for client in clients { _ = await client.waitForExit() }
        }
        let observer = try await daemon.connect()
        let state = try await observer.waitForState { $0.displays[0].links.isEmpty }
        #expect(state.displays[0].links.isEmpty)
        #expect(try await observer.health() == "SERVING")
        await observer.close()
    }

    @Test("a client that never reads does not slow the others, loses ticks, and is disconnected")
    func stalledClient() async throws {
        let daemon = try await Daemon.start(["--unwritable-timeout", "1"])
        defer { daemon.kill() }
        let staller = try daemon.rawClient("stall", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled", "--receive-buffer", "4096"])
        #expect(await staller.firstLine { $0.contains("registered") } != nil)
        let reader = try daemon.rawClient("ticks", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled", "--seconds", "2"])
        #expect(await reader.waitForExit() == 0)
        let ticks = PrintedTick.parse(reader.output)
        #expect(abs(Double(ticks.count) - 240) <= 12, "\(ticks.count) ticks in 2 s at 120 Hz")
        // The staller costs the reader nothing; a busy machine may cost it a few ticks. The
        // bound is the same 5 % as the rate bound above (2 % flaked once in a fresh-clone CI
        // run: 6 of 240); a staller that held up the fan-out would cost the reader whole
        // seconds of ticks, far above it.
        let skipped = ticks.reduce(0) { $0 + $1.skipped }
        #expect(skipped <= 12, "\(skipped) of 240 ticks skipped")
        // The staller's link is gone: disconnected after 1 s unwritable.
        let observer = try await daemon.connect()
        let state = try await observer.waitForState { $0.displays[0].links.isEmpty }
        #expect(state.displays[0].links.isEmpty)
        #expect(daemon.log.contains("disconnecting a client that has not read"))
        staller.signal(SIGKILL)
        await observer.close()
    }

    @Test("SIGTERM with open links: Closed UNAVAILABLE to each, socket removed, exit 0")
    func sigtermWithOpenLinks() async throws {
        let daemon = try await Daemon.start()
        let connection = try await daemon.connect()
        let first = try await connection.register(range: try FrameRateRange(minimum: 80, maximum: 120, preferred: 120), highFrameRate: true)
        let second = try await connection.register(range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 30))
        let other = try daemon.rawClient("hold", ["--min", "10", "--max", "60"])
        #expect(await other.firstLine { $0.contains("registered") } != nil)
        #expect(await daemon.stop() == 0)
        for link in [first, second] {
            for await _ in link.ticks {}
            #expect(link.end?.status == .unavailable, "\(link.id): \(link.end.map { "\($0)" } ?? "no end")")
            if case .closedByDaemon(let notification)? = link.end {
                #expect(notification.message.contains("shutting down"))
            } else {
                Issue.record("\(link.id) ended without a Closed notification: \(String(describing: link.end))")
            }
        }
        #expect(await other.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
        #expect(daemon.log.contains("daemon stopping"))
    }

    @Test("a second daemon refuses the socket of a live one; a stale socket file is replaced")
    func socketOwnership() async throws {
        let daemon = try await Daemon.start()
        let second = try TestProcess(
            executable: Paths.framerated, arguments: ["--socket", daemon.socket],
            stderrURL: daemon.directory.appendingPathComponent("second.log")
        )
        #expect(await second.waitForExit() != 0)
        #expect(second.stderr.contains("another framerated is already answering on \(daemon.socket)"))
        // Leave a stale socket behind (kill -9 cannot clean up), then start over it.
        daemon.process.signal(SIGKILL)
        await daemon.process.waitForExit()
        #expect(FileManager.default.fileExists(atPath: daemon.socket))
        let third = try TestProcess(
            executable: Paths.framerated, arguments: ["--socket", daemon.socket],
            stderrURL: daemon.directory.appendingPathComponent("third.log")
        )
        let connection = try await FrameRateConnection.connectWhenAnswering(socketPath: daemon.socket, process: third)
        #expect(try await connection.health() == "SERVING")
        await connection.close()
        third.signal(SIGTERM)
        #expect(await third.waitForExit() == 0)
    }

    @Test(
        "a non-root daemon with no socket path refuses to start, asking for --socket or XDG_RUNTIME_DIR (no /tmp fallback)",
        .enabled(if: getuid() == 0, "needs root to run the daemon as uid 65534")
    )
    func noDefaultSocketPath() async throws {
        let directory = try Paths.temporaryDirectory()
        let daemon = try TestProcess(
            executable: "/usr/bin/env",
            arguments: [
                "-u", "XDG_RUNTIME_DIR", "-u", "FRAMERATED_SOCKET", "-u", "LISTEN_FDS", "-u", "LISTEN_PID",
                "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Paths.framerated,
            ],
            stderrURL: directory.appendingPathComponent("framerated.log")
        )
        #expect(await daemon.waitForExit() == 1)
        #expect(
            daemon.stderr.hasPrefix(
                "framerated: error: no socket path: uid 65534 is not root and XDG_RUNTIME_DIR is not set, so there is no private place for the socket. "
                    + "Pass --socket PATH (in a directory only you can write to) or set XDG_RUNTIME_DIR (or FRAMERATED_SOCKET)."
            ),
            "\(daemon.stderr)"
        )
        #expect(!FileManager.default.fileExists(atPath: "/tmp/framerated-65534.sock"))
    }
}

extension FrameRateConnection {
    /// Connects once `process` answers on `socketPath` (polling the socket, never a fixed sleep).
    static func connectWhenAnswering(socketPath: String, process: TestProcess) async throws -> FrameRateConnection {
        var backoff = Duration.milliseconds(1)
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            if let connection = try? await FrameRateConnection.connect(socketPath: socketPath) { return connection }
            guard process.isRunning, ContinuousClock.now < deadline else {
                Issue.record("daemon never answered: \(process.stderr)")
                throw Daemon.DaemonError.notAnswering
            }
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .milliseconds(50))
        }
    }
}

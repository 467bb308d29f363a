import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// Whether `framectl` can be run as the unprivileged user `nobody` here: root
/// (runuser needs it), `/usr/sbin/runuser`, and a `nobody` account.
private let canRunAsNobody: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") && getpwnam("nobody") != nil

/// The cells of a `framectl status` link-table row (columns are two or more spaces apart).
private func cells(_ row: String) -> [String] {
    row.trimmingCharacters(in: .whitespaces).components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// The text of a `framectl status` field (`reason`, `caps`, …), its wrapped lines joined.
func statusField(_ label: String, in lines: [String]) -> String? {
    let prefix = "  \(label):".padding(toLength: 11, withPad: " ", startingAt: 0)
    guard let start = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else { return nil }
    var text = String(lines[start].dropFirst(prefix.count))
    for line in lines[(start + 1)...] {
        guard line.hasPrefix(String(repeating: " ", count: 11)) else { break }
        text += " " + line.dropFirst(11)
    }
    return text
}

/// `framectl` as a separate process against a real daemon.
/// Serialized: the machine has two cores and some of these tests count ticks.
@Suite("framectl against a real daemon", .serialized)
struct FramectlCommandTests {
    @Test("register --json: the registration, then 30 ticks at 120 Hz with consistent sequences")
    func registerJSON() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["register", "--min", "80", "--max", "120", "--preferred", "120", "--high-frame-rate", "--count", "30", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let registration = try JSONValue(parsing: try #require(run.stdout.first))
        #expect(registration["refreshRate"]?.doubleValue == 120)
        #expect(registration["callbackRate"]?.doubleValue == 120)
        let ticks = PrintedTick.parse(run.stdout)
        #expect(run.stdout.count == 31)
        #expect(ticks.count == 30)
        let link = try #require(registration["link"]?.int64Value)
        #expect(ticks.allSatisfy { $0.callbackRate == 120 && $0.link == UInt64(link) })
        for (previous, tick) in zip(ticks, ticks.dropFirst()) {
            #expect(tick.sequence == previous.sequence + tick.skipped + 1)
        }
        // An idle machine delivers every tick; a loaded CI machine may delay one or two.
        #expect(ticks.dropFirst().reduce(0) { $0 + $1.skipped } <= 2, "\(ticks.map(\.skipped))")
        // Every tick line also carries the working time left: targetTimestamp - now, in seconds.
        for line in run.stdout.dropFirst() {
            let value = try JSONValue(parsing: line)
            let workingTime = try #require(value["workingTime"]?.doubleValue)
            #expect(workingTime <= 1.0 / 120 + 1e-6, "at most one interval before the deadline")
        }
        // The link was invalidated when the count was reached.
        #expect(daemon.log.contains("released (invalidated)"))
    }

    @Test("register for people: sequence, timestamp, target, working time and measured rate")
    func registerHuman() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["register", "--min", "80", "--max", "120", "--preferred", "120", "--high-frame-rate", "--count", "5"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.count == 6)
        let registration = try #require(run.stdout.first)
        #expect(registration.wholeMatch(of: /link \d+ on display 0: refresh 120 Hz, callback 120 Hz/) != nil, "\(registration)")
        let pattern = /tick (\d+)  time (\d+\.\d{6})  target (\d+\.\d{6})  left (-?\d+\.\d{3}) ms  rate (-|\d+\.\d{2} Hz)  skipped (\d+)/
        var previous: (sequence: UInt64, time: Double)?
        for line in run.stdout.dropFirst() {
            let match = try #require(line.wholeMatch(of: pattern), "\(line)")
            let sequence = try #require(UInt64(match.1))
            let time = try #require(Double(match.2))
            let target = try #require(Double(match.3))
            let skipped = try #require(UInt64(match.6))
            #expect(abs(target - time - 1.0 / 120) < 2e-6, "\(line)")
            if let previous {
                #expect(sequence == previous.sequence + skipped + 1)
                // The measured rate is 1 / (time - previous time): 120 Hz on the vsync grid, lower across skips.
                let rate = try #require(Double(match.5.dropLast(3)), "\(line)")
                #expect(abs(rate * Double(skipped + 1) - 120) < 0.05, "\(line)")
                #expect(time > previous.time)
            } else {
                #expect(match.5 == "-", "no rate on the first tick")
            }
            previous = (sequence, time)
        }
    }

    @Test("status and status --json show a raw client's link: range, label, pid, command, the rate and its reason")
    func status() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let client = try daemon.rawClient("hold", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled", "--label", "scroller"])
        defer { client.signal(SIGKILL) }
        #expect(await client.firstLine { $0.contains("registered") } != nil)
        let pid = String(client.pid)

        let text = try await daemon.framectl(["status"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.first == "display 0: 120 Hz")
        #expect(text.stdout.contains("  profile: promotion-phone (120, 80, 60, 48, 40, 30, 24, 20, 16, 15, 12, 10 Hz)"))
        let reason = try #require(statusField("reason", in: text.stdout))
        #expect(reason.contains("120 Hz is the lowest rate that serves every link exactly; link 1 'scroller' (80, 120, 120) holds it there"))
        #expect(statusField("caps", in: text.stdout) == "low power off, limit frame rate off, thermal nominal (no cap)")
        let header = try #require(text.stdout.firstIndex { $0.hasPrefix("    LINK  ") })
        #expect(text.stdout[header - 1] == "  links:")
        #expect(cells(text.stdout[header]) == ["LINK", "RANGE HZ", "CALLBACK", "LABEL", "PID", "UID", "AGE", "COMMAND"])
        let row = cells(try #require(text.stdout.dropFirst(header + 1).first))
        #expect(row.count == 8 && Array(row[0..<6]) == ["1", "(80, 120, 120) hfr", "120 Hz", "scroller", pid, "0"] && row[7] == "python3", "\(row)")
        #expect(row[6].wholeMatch(of: /\d+s/) != nil, "the link's age: \(row)")
        // The decision: the rule with its ladder step, the holder with its pid and command.
        #expect(text.stdout.contains("  rule:    exact (step 2: the lowest rate that serves every link exactly)"))
        #expect(text.stdout.contains("  held by: link 1 (pid \(pid), python3)"))
        #expect(text.stdout.contains("  cap:     none"))
        #expect(text.stdout.contains("  limited: no link"))
        #expect(text.stdout.allSatisfy { $0.count <= 80 }, "80 columns")

        let json = try await daemon.framectl(["status", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.count == 1)
        let state = try CompositorState(json: try JSONValue(parsing: try #require(json.stdout.first)))
        let display = try #require(state.displays.first)
        #expect(display.refreshRate == 120)
        #expect(display.reason.contains("link 1 'scroller' (80, 120, 120) holds it there"))
        #expect(display.decision?.rule == .exact && display.decision?.deciders == [LinkID(rawValue: 1)])
        #expect(try JSONValue(parsing: try #require(json.stdout.first))["displays"]?[0]?["decision"]?["rule"] == "exact", "printed as is")
        let link = try #require(display.links.first)
        #expect(link.since != nil)
        #expect(link.range == (try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)))
        #expect(link.label == "scroller")
        #expect(link.highFrameRate)
        #expect(link.callbackRate == 120)
        #expect(link.peer?.pid == client.pid)
        #expect(link.peer?.command == "python3")
    }

    @Test("caps --low-power on as root: caps at 60 Hz, and status says so and why")
    func lowPowerAsRoot() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let client = try daemon.rawClient("hold", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled"])
        defer { client.signal(SIGKILL) }
        #expect(await client.firstLine { $0.contains("registered") } != nil)

        let caps = try await daemon.framectl(["caps", "--low-power", "on"])
        #expect(caps.status == 0, "\(caps.stderr)")
        #expect(caps.stdout == ["display 0: low power on, limit frame rate off, thermal nominal (at most 60 Hz: Low Power Mode)"])
        // The decrease takes effect after the dwell: wait for it by polling the state, never by sleeping.
        let observer = try await daemon.connect()
        _ = try await observer.waitForState { $0.displays[0].refreshRate == 60 }
        await observer.close()

        let status = try await daemon.framectl(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.first == "display 0: 60 Hz")
        let reason = try #require(statusField("reason", in: status.stdout))
        #expect(reason.contains("Low Power Mode caps the display at 60 Hz"), "\(reason)")
        #expect(statusField("caps", in: status.stdout) == "low power on, limit frame rate off, thermal nominal (at most 60 Hz: Low Power Mode)")
    }

    @Test("an unprivileged user: caps changes are refused naming the admin group; registering works", .enabled(if: canRunAsNobody))
    func unprivilegedUser() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        // nobody must reach both the binary and the socket, or the test would prove nothing.
        let health = try await daemon.framectl(["health"], user: "nobody")
        try #require(health.status == 0, "nobody cannot run framectl against the daemon: \(health.stderr)")

        let caps = try await daemon.framectl(["caps", "--low-power", "on"], user: "nobody")
        #expect(caps.status == 1)
        #expect(caps.stdout.isEmpty)
        #expect(caps.stderr.hasPrefix("framectl: error: "), "\(caps.stderr)")
        #expect(caps.stderr.contains("'framerated-admin' group"), "\(caps.stderr)")
        #expect(caps.stderr.contains("PERMISSION_DENIED"), "\(caps.stderr)")
        let observer = try await daemon.connect()
        #expect(try await observer.state().displays[0].caps == DisplayCaps(), "the refused change did not happen")

        let register = try await daemon.framectl(["register", "--min", "30", "--max", "60", "--preferred", "60", "--count", "3", "--json"], user: "nobody")
        #expect(register.status == 0, "\(register.stderr)")
        #expect(PrintedTick.parse(register.stdout).count == 3)
        #expect(daemon.log.contains("uid=65534"), "the daemon saw nobody's uid")
        await observer.close()
    }

    @Test("health prints SERVING and exits 0")
    func health() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["health"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == ["SERVING"])
    }

    @Test("describe lists every v1 method under its service")
    func describe() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["describe"])
        #expect(run.status == 0, "\(run.stderr)")
        for method in V1Method.allCases {
            let service = try #require(run.stdout.firstIndex(of: method.service), "service \(method.service)")
            let line = try #require(run.stdout.firstIndex { $0.hasPrefix("  \(method.method) (") }, "\(method.rawValue)")
            #expect(service < line)
            // No other service heading between the service and its method.
            #expect(run.stdout[service + 1..<line].allSatisfy { $0.isEmpty || $0.hasPrefix(" ") }, "\(method.rawValue)")
        }
        #expect(run.stdout.contains("  Register (server-streaming, streams framerate.v1.DisplayLink/Tick)"))
    }

    @Test("call prints the result as one JSON line")
    func call() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["call", "framerate.v1.Compositor/GetState", "{}"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.count == 1)
        let state = try CompositorState(json: try JSONValue(parsing: try #require(run.stdout.first)))
        #expect(state.displays.map(\.id) == [DisplayID(rawValue: 0)])
    }

    @Test("call with params the daemon rejects exits 1 and prints the error object on stderr")
    func callBadParams() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["call", "framerate.v1.DisplayLink/Register", #"{"range":{"minimum":80,"maximum":60}}"#])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        let error = try #require(RPCError(try JSONValue(parsing: run.stderr.trimmingCharacters(in: .newlines))), "\(run.stderr)")
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(error.message == "invalid range: maximum (60 Hz) must be at least minimum (80 Hz)")
        #expect(error.data?["field"] == "range.maximum")

        let unknown = try await daemon.framectl(["call", "framerate.v1.Nothing/Here", "{}"])
        #expect(unknown.status == 1)
        #expect(RPCError(try JSONValue(parsing: unknown.stderr.trimmingCharacters(in: .newlines)))?.code == RPCError.methodNotFoundCode)
    }

    @Test("watch --json prints an event when another client registers, and exits 0 on SIGINT")
    func watch() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let watch = try TestProcess(
            executable: Paths.framectl, arguments: ["watch", "--json", "--socket", daemon.socket],
            stderrURL: daemon.directory.appendingPathComponent("watch.log")
        )
        defer { watch.signal(SIGKILL) }
        // The Watch result comes first: from then on no event is missed.
        let started = try #require(await watch.firstLine { $0.contains(#""state""#) }, "\(watch.stderr)")
        #expect(try JSONValue(parsing: started)["watch"]?.int64Value == 1)

        let connection = try await daemon.connect()
        let link = try await connection.register(range: try FrameRateRange(minimum: 30, maximum: 60, preferred: 30), label: "other")
        let added = try #require(await watch.firstLine { $0.contains(#""kind":"linkAdded""#) }, "\(watch.stderr)")
        let event = try CompositorEvent(params: try JSONValue(parsing: added))
        guard case .linkAdded(let display, let state) = event else {
            Issue.record("not a linkAdded event: \(added)")
            return
        }
        #expect(display == DisplayID(rawValue: 0))
        #expect(state.link == link.id)
        #expect(state.label == "other")

        watch.signal(SIGINT)
        #expect(await watch.waitForExit() == 0, "exits normally on SIGINT: \(watch.stderr)")
        await connection.close()
    }

    @Test("no daemon at the path: exit 1, naming the path and how to start the daemon")
    func noDaemon() async throws {
        let directory = try Paths.temporaryDirectory()
        let path = "/tmp/nonexistent/x.sock"
        let run = try TestProcess(executable: Paths.framectl, arguments: ["status", "--socket", path], stderrURL: directory.appendingPathComponent("framectl.log"))
        #expect(await run.waitForExit() == 1)
        #expect(run.output.isEmpty)
        #expect(
            run.stderr.hasPrefix("framectl: error: framerated is not running: nothing is listening on \(path) (the socket asked for)."),
            "\(run.stderr)"
        )
        #expect(run.stderr.contains("`framerated --socket \(path)`"))
        // Only that path was tried: no advice about the system daemon.
        #expect(!run.stderr.contains("systemctl"))
    }

    @Test("by default framectl finds the per-user daemon in $XDG_RUNTIME_DIR")
    func perUserDaemon() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let runtime = URL(fileURLWithPath: daemon.socket).deletingLastPathComponent().path
        let run = try TestProcess(
            executable: "/usr/bin/env", arguments: ["-u", "FRAMERATED_SOCKET", "XDG_RUNTIME_DIR=\(runtime)", Paths.framectl, "health"],
            stderrURL: daemon.directory.appendingPathComponent("framectl-health.log")
        )
        #expect(await run.waitForExit() == 0, "\(run.stderr)")
        #expect(run.output == ["SERVING"])
    }

    @Test(
        "a daemon run by another user is refused, naming its uid and path; that user's own framectl uses it",
        .enabled(if: canRunAsNobody, "needs root, runuser and the nobody account")
    )
    func untrustedDaemon() async throws {
        let directory = try Paths.temporaryDirectory()
        #expect(chmod(directory.path, 0o755) == 0)
        #expect(chown(directory.path, 65534, 65534) == 0)
        let socket = directory.appendingPathComponent("framerated.sock").path
        let daemon = try TestProcess(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", Paths.framerated, "--socket", socket],
            stderrURL: directory.appendingPathComponent("framerated.log")
        )
        defer { daemon.signal(SIGKILL) }
        // Ready once it listens: from then on this client refuses it (polled with backoff, no fixed sleep).
        let deadline = ContinuousClock.now + .seconds(20)
        var backoff = Duration.milliseconds(1)
        var refusal: FrameRateClientError?
        while refusal == nil, daemon.isRunning, ContinuousClock.now < deadline {
            do {
                let connection = try await FrameRateConnection.connect(socketPath: socket)
                await connection.close()
                Issue.record("connected to a daemon run by uid 65534")
                return
            } catch .untrustedDaemon(let path, let uid) {
                refusal = .untrustedDaemon(path: path, uid: uid)
            } catch {
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .milliseconds(50))
            }
        }
        #expect(refusal == .untrustedDaemon(path: socket, uid: 65534), "\(daemon.stderr)")

        let asRoot = try TestProcess(
            executable: Paths.framectl, arguments: ["health", "--socket", socket], stderrURL: directory.appendingPathComponent("framectl-root.log")
        )
        #expect(await asRoot.waitForExit() == 1)
        #expect(asRoot.output.isEmpty)
        #expect(
            asRoot.stderr.hasPrefix("framectl: error: refusing the daemon at \(socket): the process listening there runs as uid 65534,"),
            "\(asRoot.stderr)"
        )
        let asNobody = try TestProcess(
            executable: "/usr/sbin/runuser", arguments: ["-u", "nobody", "--", Paths.framectl, "health", "--socket", socket],
            stderrURL: directory.appendingPathComponent("framectl-nobody.log")
        )
        #expect(await asNobody.waitForExit() == 0, "\(asNobody.stderr)")
        #expect(asNobody.output == ["SERVING"])
    }

    @Test("an inverted range exits 2 with the rule, before contacting any daemon")
    func invalidRange() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["register", "--min", "80", "--max", "60"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr.hasPrefix(
                "framectl: error: invalid range: maximum (60 Hz) must be at least minimum (80 Hz) (--min, --max, --preferred are in Hz)\n"
            ),
            "\(run.stderr)"
        )
        // The daemon logs every connection at debug level: framectl never connected.
        let observer = try await daemon.connect()
        _ = try await observer.health()
        await observer.close()
        #expect(!daemon.log.contains("command=framectl"), "\(daemon.log)")
        // Without a daemon the result is the same, not "not running".
        let directory = try Paths.temporaryDirectory()
        let alone = try TestProcess(
            executable: Paths.framectl, arguments: ["register", "--min", "80", "--max", "60", "--socket", "/tmp/nonexistent/x.sock"],
            stderrURL: directory.appendingPathComponent("framectl.log")
        )
        #expect(await alone.waitForExit() == 2)
        #expect(alone.stderr.contains("must be at least minimum"))
    }
}

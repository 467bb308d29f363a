import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// `framectl register`: register a link and print its ticks.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register a display link and print its ticks until Ctrl-C.",
        discussion: """
            Registers a link with the frame-rate range --min...--max (Hz), prints its registration \
            (link id, display, refresh and callback rate), then one line per tick: sequence, \
            timestamp and target (seconds on CLOCK_MONOTONIC), working time left until the target \
            (ms), the measured rate (1 / time since the previous tick) and ticks skipped. \
            Ctrl-C (or --count) invalidates the link and exits 0. The range is checked before \
            the daemon is contacted.

            Like an app that carries the high-frame-rate key, framectl declares the \
            high-frame-rate entitlement by default, so --min 80 --max 120 gets 80-120 Hz; \
            --no-high-frame-rate registers without it, to see the 60 Hz gate. Whenever the link \
            gets less than it asked for, one line on stderr says why (e.g. "limited to 60 Hz by \
            Low Power Mode"), and again whenever that changes while it runs; stdout stays the \
            tick stream. A `systemctl restart framerated` keeps the connection: the ticks go \
            on, the restart showing as one tick with skipped > 0. If the daemon is lost \
            (stopped, crashed), framectl says so on stderr ("daemon gone; reconnecting…"), \
            reconnects (backing off from 10 ms to 1 s), registers the link again and says so \
            ("reconnected after 1.2 s; link 3 re-registered"); the ticks go on under the same \
            link id, the outage showing as one tick with skipped > 0.

            Examples:
              framectl register --min 80 --max 120 --preferred 120
              framectl register --min 80 --max 120 --no-high-frame-rate
              framectl register --min 30 --max 60 --label video --count 10 --json
              framectl register --min 120 --max 120 --preferred 120 --adaptive
              framectl register --min 60 --max 60 --timelines 3 --latency 2 --json --count 5
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(name: .customLong("min"), help: ArgumentHelp("Lowest acceptable callback rate, Hz (>= 0.01).", valueName: "hz"))
    var minimum: Double

    @Option(name: .customLong("max"), help: ArgumentHelp("Highest acceptable callback rate, Hz (<= 1000).", valueName: "hz"))
    var maximum: Double

    @Option(help: ArgumentHelp("Preferred rate, Hz, within --min...--max; 0 means no preference.", valueName: "hz"))
    var preferred: Double = 0

    @Option(help: "A label shown by `framectl status`.")
    var label: String?

    @Flag(
        inversion: .prefixedNo, exclusivity: .chooseLast,
        help: "Declare the high-frame-rate entitlement (rates above 60 Hz); on by default."
    )
    var highFrameRate = true

    @Flag(help: "Register paused: no ticks until resumed.")
    var paused = false

    @Flag(
        help: "Adaptive: step down to a lower, even rate while frames keep missing their deadline (framectl reports each frame done as it prints the tick)."
    )
    var adaptive = false

    @Option(
        help: ArgumentHelp(
            "Frame timelines each tick lists, 1-7 (CAMetalDisplayLink-style future vsyncs with their deadlines; in --json output).",
            valueName: "n"
        )
    )
    var timelines = 1

    @Option(
        name: .customLong("latency"),
        help: ArgumentHelp("Preferred frame latency: a frame started at a tick shows 1 or 2 intervals later (targetPresentationTimestamp).", valueName: "n")
    )
    var frameLatency = 1

    @Option(help: ArgumentHelp("The display (0 is the default display).", valueName: "n"))
    var display: Int?

    @Option(help: ArgumentHelp("Stop after this many ticks.", valueName: "n"))
    var count: Int?

    @Flag(
        help: "Print one compact JSON object per line: the registration (with its decision), then each tick's params plus workingTime (s)."
    )
    var json = false

    func validate() throws {
        _ = try ArgumentRules.range(minimum: minimum, maximum: maximum, preferred: preferred)
        _ = try ArgumentRules.display(display)
        _ = try ArgumentRules.count(count)
        _ = try ArgumentRules.frameTiming(timelines: timelines, latency: frameLatency)
    }

    /// How the tick loop ended on its own.
    enum LoopEnd: Sendable {
        /// `--count` ticks were printed.
        case countReached
        /// The tick stream finished: the link or the connection ended.
        case streamEnded
    }

    func run() async throws {
        let range = try ArgumentRules.range(minimum: minimum, maximum: maximum, preferred: preferred)
        // A daemon restart should not end a long-running register: reconnect and register again.
        let connection = try await global.connectReconnecting(mentionWatches: false)
        let timing = try ArgumentRules.frameTiming(timelines: timelines, latency: frameLatency)
        let link = try await connection.register(
            range: range, display: try ArgumentRules.display(display), paused: paused, label: label, highFrameRate: highFrameRate,
            adaptive: adaptive, timelines: timing.timelines, preferredFrameLatency: timing.latency
        )
        let registration =
            json
            ? TickText.registrationJSON(
                link: link.id, display: link.display, refreshRate: link.refreshRate, callbackRate: link.callbackRate,
                decision: link.decision, limit: link.limit
            )
            : TickText.registration(link: link.id, display: link.display, refreshRate: link.refreshRate, callbackRate: link.callbackRate)
        Console.out(registration)
        var tracker = LimitTracker()
        if let line = tracker.update(limit: link.limit, cap: link.decision?.cap) { Console.error(line) }
        // A watch on the same connection tells when the limit may have changed; without one
        // (the daemon refused it) the registration's line is all there is.
        let watch = try? await connection.watch()
        let follower = LimitFollower(link: link, tracker: tracker)

        let limit = try ArgumentRules.count(count)
        let printer = TickPrinter(json: json)
        let outcome = await Interruptible.run { () async -> LoopEnd in
            await withTaskGroup(of: LoopEnd?.self) { group in
                group.addTask {
                    var printer = printer
                    var printed = 0
                    for await tick in link.ticks {
                        Console.out(printer.line(for: tick, now: MonotonicClock.now.seconds))
                        // An adaptive link measures each frame from its tick to this report.
                        if adaptive { try? await link.frameDone(sequence: tick.sequence) }
                        printed += 1
                        if let limit, printed >= limit { return .countReached }
                    }
                    return .streamEnded
                }
                if let watch {
                    group.addTask {
                        await follower.follow(watch)
                        return nil
                    }
                }
                // The tick loop's end ends the command; the follower only ends with the watch.
                var end: LoopEnd?
                while end == nil, let next = await group.next() { end = next }
                group.cancelAll()
                return end ?? .streamEnded
            }
        }

        switch outcome {
        case .completed(.countReached), .interrupted:
            // Closing the connection releases the link anyway; invalidating first is tidier.
            try? await link.invalidate()
            await connection.close()
        case .completed(.streamEnded):
            await connection.close()
            let end = link.end ?? .connectionClosed
            switch end {
            case .connectionClosed: throw FrameRateClientError.connectionClosed
            default:
                let hint = end.status == .unavailable ? "; run the command again once the daemon is back (`framectl health`)" : ""
                throw CommandFailure("link \(link.id.rawValue) was \(end)\(hint)")
            }
        }
    }
}

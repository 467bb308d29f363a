import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl watch`: print compositor events.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print compositor events (rate changes, links, caps) until Ctrl-C.",
        discussion: """
            Starts a watch, prints each display's state, then one line per event: a display's \
            refresh rate changed, a link was added, updated or removed, or caps changed. A rate \
            change starts with when it happened (seconds on CLOCK_MONOTONIC) and gives its \
            decision: the rule (the step of the arbitration ladder that chose the rate), the \
            links that hold the display there, the cap in force, how many links are limited, \
            and the reason. With --json, each event's params are printed as is: a rate change \
            carries `decision` and `at`. Ctrl-C ends the watch and exits 0. If the daemon is \
            lost, one line on stderr says so, framectl reconnects and watches again (another \
            line says when), and the watch resumes with a `resynchronized` event carrying the \
            state.

            Examples:
              framectl watch
              framectl watch --json
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print compact JSON lines: the Watch result, then each event's params.")
    var json = false

    func run() async throws {
        // A daemon restart should not end a watch: reconnect and watch again.
        let connection = try await global.connectReconnecting()
        let watch = try await connection.watch()
        if json {
            Console.out(watch.rawResult.jsonString)
        } else {
            for line in EventText.started(watch: watch.id, state: watch.initialState) { Console.out(line) }
        }
        let json = self.json
        let outcome = await Interruptible.run {
            for await event in watch.events {
                Console.out(json ? event.params.jsonString : EventText.line(for: event, receivedAt: MonotonicClock.now.seconds))
            }
        }
        switch outcome {
        case .interrupted:
            try? await watch.unwatch()
            await connection.close()
        case .completed:
            await connection.close()
            throw FrameRateClientError.connectionClosed
        }
    }
}

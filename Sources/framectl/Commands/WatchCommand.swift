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
            refresh rate changed (and why), a link was added, updated or removed, or caps changed. \
            Ctrl-C ends the watch and exits 0.

            Examples:
              framectl watch
              framectl watch --json
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print compact JSON lines: the Watch result, then each event's params.")
    var json = false

    func run() async throws {
        let connection = try await global.connect()
        let watch = try await connection.watch()
        if json {
            Console.out(watch.rawResult.jsonString)
        } else {
            for line in EventText.started(watch: watch.id, state: watch.initialState) { Console.out(line) }
        }
        let json = self.json
        let outcome = await Interruptible.run {
            for await event in watch.events {
                Console.out(json ? event.params.jsonString : EventText.line(for: event))
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

import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl status`: displays, rates, reasons, caps and links.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each display's refresh rate, why, its caps, and every link.",
        discussion: """
            For each display: the refresh rate in force (Hz), its profile and supported rates, \
            the reason arbitration gives, the power and thermal caps, and a table of links with \
            their range (Hz), paused flag, callback rate, label and the pid, uid and command of \
            the process holding them.

            Examples:
              framectl status
              framectl status --json | jq '.displays[0].refreshRate'
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print the daemon's GetState result as one compact JSON line.")
    var json = false

    func run() async throws {
        let connection = try await global.connect()
        let result = try await connection.call(.getState, params: JSONValue.object([:]))
        await connection.close()
        if json {
            Console.out(result.jsonString)
            return
        }
        let state: CompositorState
        do {
            state = try CompositorState(json: result)
        } catch {
            throw FrameRateClientError.protocolViolation("an unreadable GetState result: \(error.message)")
        }
        for line in StatusText.lines(for: state) { Console.out(line) }
    }
}

import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl residency`: how long each display spent at each rate, and which links held it there.
struct ResidencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "residency",
        abstract: "Show each display's time at each refresh rate and which links held it there.",
        discussion: """
            For each display, since the daemon started: the time at each refresh rate, its \
            share and a bar chart, then who held each rate: the links that decided it (split \
            evenly when several did; links that ended keep their share), a cap, or idle. \
            --json prints each display's GetState residency as is.

            Examples:
              framectl residency
              framectl residency --json | jq '.displays[0].residency[0].heldBy'
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print {\"displays\":[{\"id\",\"uptime\",\"residency\"}]} from GetState as one compact JSON line.")
    var json = false

    func run() async throws {
        let (result, decode) = try await global.fetchState()
        if json {
            // The daemon's own values, not a re-encoding: what it withholds stays withheld.
            let displays = (result["displays"]?.arrayValue ?? []).map { display -> JSONValue in
                ["id": display["id"] ?? .null, "uptime": display["uptime"] ?? .null, "residency": display["residency"] ?? .array([])]
            }
            Console.out(JSONValue.object(["displays": .array(displays)]).jsonString)
            return
        }
        let state = try decode()
        for line in ResidencyText.lines(for: state) { Console.out(line) }
    }
}

import ArgumentParser
import FrameRateClient

/// `framectl health`: the gRPC health check.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that the daemon is serving; exit 0 only when it is.",
        discussion: """
            Prints the status the daemon reports (SERVING when all is well) and exits 0 for \
            SERVING, 1 otherwise, including when the daemon cannot be reached. Use it in scripts \
            and readiness probes.

            Examples:
              framectl health
              framectl health --service framerate.v1.DisplayLink
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(help: ArgumentHelp("Check one service (see `framectl describe`) instead of the whole daemon.", valueName: "name"))
    var service: String?

    func run() async throws {
        let connection = try await global.connect()
        let status = try await connection.health(service: service)
        await connection.close()
        Console.out(status)
        guard status == "SERVING" else {
            let subject = service.map { "service \($0)" } ?? "the daemon"
            throw CommandFailure("\(subject) is \(status), not SERVING; check the daemon's log (`journalctl -u framerated`)")
        }
    }
}

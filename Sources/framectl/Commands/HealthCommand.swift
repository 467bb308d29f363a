import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl health`: the gRPC health check.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that the daemon is serving; exit 0 only when it is.",
        discussion: """
            Prints the status the daemon reports (SERVING when all is well) and exits 0 for \
            SERVING, 1 otherwise, including when the daemon cannot be reached. Use it in scripts \
            and readiness probes. --json prints the Check result as is, with the daemon's \
            version and the git commit it was built from.

            Examples:
              framectl health
              framectl health --service framerate.v1.DisplayLink
              framectl health --json | jq -r .version
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(help: ArgumentHelp("Check one service (see `framectl describe`) instead of the whole daemon.", valueName: "name"))
    var service: String?

    @Flag(help: "Print the daemon's Check result (status, version, commit) as one compact JSON line.")
    var json = false

    func run() async throws {
        let connection = try await global.connect()
        let result = try await connection.call(.healthCheck, params: HealthCheckRequest(service: service).jsonValue)
        await connection.close()
        guard let status = result["status"]?.stringValue else {
            throw CommandFailure("the daemon answered Check without a status: \(result.jsonString)")
        }
        Console.out(json ? result.jsonString : status)
        guard status == "SERVING" else {
            let subject = service.map { "service \($0)" } ?? "the daemon"
            throw CommandFailure("\(subject) is \(status), not SERVING; check the daemon's log (`journalctl -u framerated`)")
        }
    }
}

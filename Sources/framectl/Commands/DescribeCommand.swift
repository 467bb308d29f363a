import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl describe`: the daemon's services and methods.
struct DescribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "describe",
        abstract: "List every service and method the daemon offers, with their parameters.",
        discussion: """
            Asks the daemon (framerate.v1.Reflection/ListServices) and prints each service, its \
            methods, how each is used (unary, server-streaming, notification) and its params with \
            type, unit and whether required. Use the full method names with `framectl call`.

            Examples:
              framectl describe
              framectl describe --json
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print the daemon's ListServices result as one compact JSON line.")
    var json = false

    func run() async throws {
        let connection = try await global.connect()
        let catalog = try await connection.listServices()
        await connection.close()
        if json {
            Console.out(catalog.jsonString)
        } else {
            for line in CatalogText.lines(for: catalog) { Console.out(line) }
        }
    }
}

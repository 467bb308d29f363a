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

            --openrpc prints the daemon's rpc.discover result instead: an OpenRPC 1.3 document \
            (methods, params, results and errors as JSON Schema) for OpenRPC tools and client \
            generators.

            Examples:
              framectl describe
              framectl describe --json
              framectl describe --openrpc > framerated.openrpc.json
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print the daemon's ListServices result as one compact JSON line.")
    var json = false

    @Flag(help: "Print the daemon's OpenRPC document (rpc.discover) as one compact JSON line.")
    var openrpc = false

    func validate() throws {
        if json && openrpc { throw ValidationError("--json and --openrpc exclude each other") }
    }

    func run() async throws {
        let connection = try await global.connect()
        if openrpc {
            let document = try await connection.call(OpenRPCDocument.discoverMethod, params: nil)
            await connection.close()
            Console.out(document.jsonString)
            return
        }
        let catalog = try await connection.listServices()
        await connection.close()
        if json {
            Console.out(catalog.jsonString)
        } else {
            for line in CatalogText.lines(for: catalog) { Console.out(line) }
        }
    }
}

import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl call`: one raw JSON-RPC request.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Send one request and print the result as a JSON line.",
        discussion: """
            Sends METHOD with the JSON params given (an object or array; none if omitted) and \
            prints the daemon's result as one compact JSON line. If the daemon answers with an \
            error, prints the error object as JSON on standard error and exits 1. Streams a \
            method starts (ticks, events) are not printed: use `register` and `watch` for those. \
            `framectl describe` lists the methods.

            Examples:
              framectl call framerate.v1.Compositor/GetState
              framectl call grpc.health.v1.Health/Check '{"service":"framerate.v1.DisplayLink"}'
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Argument(help: ArgumentHelp("The full method name, e.g. framerate.v1.Compositor/GetState.", valueName: "method"))
    var method: String

    @Argument(help: ArgumentHelp("The params as JSON, e.g. '{\"link\":3}'.", valueName: "json"))
    var params: String?

    func validate() throws {
        _ = try ArgumentRules.params(params)
    }

    func run() async throws {
        let params = try ArgumentRules.params(params)
        let connection = try await global.connect()
        let result: JSONValue
        do {
            result = try await connection.call(method, params: params)
        } catch .rpc(let error) {
            await connection.close()
            Console.error(error.jsonValue.jsonString)
            throw ExitCode.failure
        }
        await connection.close()
        Console.out(result.jsonString)
    }
}

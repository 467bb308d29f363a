import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `--socket PATH`, shared by every subcommand.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket (now: \(SocketPath.discover().path)).",
            discussion: "Default: $FRAMERATED_SOCKET, else $XDG_RUNTIME_DIR/framerated.sock when that socket exists "
                + "(your own daemon), else \(SocketPath.system) (the system daemon). Whoever answers must be root, "
                + "the framerated user or you.",
            valueName: "path"
        )
    )
    var socket: String?

    /// Connects to the daemon at `--socket`, else the one found by the default
    /// rule (``SocketPath/discover(explicit:environment:isSocket:)``); with `reconnect`, a connection
    /// that drops later is made again (only `register` asks for that: one-shot
    /// commands fail fast).
    func connect(reconnect: ReconnectPolicy? = nil) async throws(FrameRateClientError) -> FrameRateConnection {
        try await FrameRateConnection.connect(socketPath: socket, reconnect: reconnect)
    }

    /// Connects with the default reconnect policy, saying on stderr (one line each) when
    /// the daemon is lost and when the connection is back (``ConnectionText``).
    func connectReconnecting(mentionWatches: Bool = true) async throws(FrameRateClientError) -> FrameRateConnection {
        try await FrameRateConnection.connect(socketPath: socket, reconnect: .default) { change in
            Console.error(ConnectionText.line(for: change, mentionWatches: mentionWatches))
        }
    }

    /// One `Compositor/GetState` on a connection of its own (`status`, `residency`): the
    /// daemon's result as sent, and its decoding.
    func fetchState() async throws -> (json: JSONValue, state: () throws -> CompositorState) {
        let connection = try await connect()
        let result = try await connection.call(.getState, params: JSONValue.object([:]))
        await connection.close()
        return (result, { () throws -> CompositorState in
            do throws(RPCError) {
                return try CompositorState(json: result)
            } catch {
                throw FrameRateClientError.protocolViolation("an unreadable GetState result: \(error.message)")
            }
        })
    }
}

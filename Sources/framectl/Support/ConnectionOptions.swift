import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `--socket PATH`, shared by every subcommand.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket (now: \(SocketPath.resolve())).",
            discussion: "Default: $FRAMERATED_SOCKET, else \(SocketPath.system) for root, "
                + "else $XDG_RUNTIME_DIR/framerated.sock, else /tmp/framerated-UID.sock.",
            valueName: "path"
        )
    )
    var socket: String?

    /// Connects to the daemon at the resolved path; with `reconnect`, a connection
    /// that drops later is made again (only `register` asks for that: one-shot
    /// commands fail fast).
    func connect(reconnect: ReconnectPolicy? = nil) async throws(FrameRateClientError) -> FrameRateConnection {
        try await FrameRateConnection.connect(socketPath: SocketPath.resolve(explicit: socket), reconnect: reconnect)
    }
}

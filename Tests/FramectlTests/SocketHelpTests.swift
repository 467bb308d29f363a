import ArgumentParser
import FrameRateProtocol
import Testing

@testable import framectl

/// The help text states the discovery rule of docs/protocol.md ("Finding the daemon").
@Suite("framectl --help states how the daemon is found")
struct SocketHelpTests {
    /// `text` with every run of whitespace (including ArgumentParser's line wrapping) as one space.
    private func flattened(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test("--socket: $FRAMERATED_SOCKET, the per-user socket when it exists, the system socket; who may answer")
    func socketOptionHelp() {
        let help = flattened(StatusCommand.helpMessage())
        #expect(
            help.contains(
                "Default: $FRAMERATED_SOCKET, else $XDG_RUNTIME_DIR/framerated.sock when that socket exists (your own daemon), "
                    + "else /run/framerated/framerated.sock (the system daemon). Whoever answers must be root, the framerated user or you."
            ),
            "\(help)"
        )
        #expect(!help.contains("/tmp/framerated"))
    }

    @Test("the overview states the same rule")
    func overview() {
        let help = flattened(Framectl.helpMessage())
        #expect(
            help.contains(
                "by default the socket is $FRAMERATED_SOCKET, else your own daemon's $XDG_RUNTIME_DIR/framerated.sock when it exists, "
                    + "else the system daemon's /run/framerated/framerated.sock."
            ),
            "\(help)"
        )
        #expect(help.contains("only talks to a daemon running as root, the framerated user or you"))
    }

    @Test("without --socket the connect path is left to discovery")
    func noSocketMeansDiscovery() throws {
        let command = try #require(try Framectl.parseAsRoot(["health"]) as? HealthCommand)
        #expect(command.global.socket == nil)
    }
}

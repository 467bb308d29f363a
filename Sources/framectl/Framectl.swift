import ArgumentParser
import FrameRateClient
import FrameRateVersion

/// `framectl`: talk to framerated from the command line.
@main
struct Framectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framectl",
        abstract: "Talk to framerated, the display frame-rate hint broker.",
        discussion: """
            Register display links and watch their ticks, inspect and change the compositor, \
            and call any protocol method. Every subcommand takes --socket PATH; by default the \
            socket is $FRAMERATED_SOCKET, else your own daemon's $XDG_RUNTIME_DIR/framerated.sock \
            when it exists, else the system daemon's /run/framerated/framerated.sock. framectl \
            only talks to a daemon running as root, the framerated user or you.

            Examples:
              framectl status
              framectl register --min 80 --max 120 --preferred 120 --count 5
              framectl watch
            """,
        version: "framectl \(FrameRateVersion.description)",
        subcommands: [
            RegisterCommand.self, StatusCommand.self, CapsCommand.self, WatchCommand.self,
            ResidencyCommand.self, TraceCommand.self, TopCommand.self, HealthCommand.self, DescribeCommand.self, CallCommand.self,
            BoostCommand.self, AdvanceCommand.self,
        ]
    )

    /// Runs the command line, turning every expected failure into one
    /// `framectl: error: …` line on standard error and a non-zero exit status:
    /// 2 for usage errors, 1 for everything else.
    static func main() async {
        do {
            var command = try parseAsRoot(ArgumentOrder.hoistingGlobalOptions(Array(CommandLine.arguments.dropFirst())))
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }

    private static func exit(reporting error: any Error) -> Never {
        switch error {
        case let failure as CommandFailure:
            Console.error("framectl: error: \(failure.message)")
            exit(withError: ExitCode(failure.exitCode))
        case let failure as FrameRateClientError:
            Console.error("framectl: error: \(failure.description)")
            exit(withError: ExitCode.failure)
        case is ExitCode:
            exit(withError: error)
        default:
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            if code == .validationFailure {
                var text = fullMessage(for: error)
                if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
                Console.error("framectl: error: \(text)")
                exit(withError: ExitCode(2))
            }
            Console.error("framectl: error: \(message(for: error))")
            exit(withError: code)
        }
    }
}

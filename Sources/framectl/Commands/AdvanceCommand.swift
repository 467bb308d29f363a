import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// `framectl advance`: move a virtual-clock daemon's time on.
struct AdvanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advance",
        abstract: "Move a virtual-clock daemon's time on by some seconds.",
        discussion: """
            For a daemon started with --clock virtual (simulations, tests): moves its time on by \
            SECONDS (0 to 86400) through every vsync in between, and prints the virtual now \
            afterwards, in seconds. Time moves this way only while no unpaused link ticks; \
            while one does, its clients' answers to their ticks move time, and the daemon \
            refuses (FAILED_PRECONDITION), as a daemon on the real clock always does.

            Examples:
              framectl advance 0.5
              framectl advance 60 --json
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Argument(help: ArgumentHelp("How far to move virtual time, seconds.", valueName: "seconds"))
    var seconds: Double

    @Flag(help: #"Print the Advance result ({"now":…}) as one compact JSON line."#)
    var json = false

    func validate() throws {
        _ = try ArgumentRules.advance(seconds)
    }

    func run() async throws {
        let seconds = try ArgumentRules.advance(seconds)
        let connection = try await global.connect()
        let now = try await connection.advance(seconds: seconds)
        await connection.close()
        Console.out(json ? JSONValue.object(["now": JSONValue(now)]).jsonString : "virtual time now \(FrameRateMath.format(now)) s")
    }
}

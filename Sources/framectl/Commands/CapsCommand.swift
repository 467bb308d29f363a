import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// `framectl caps`: show or change power and thermal caps.
struct CapsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caps",
        abstract: "Show or change Low Power Mode, Limit Frame Rate and the thermal state.",
        discussion: """
            Without a change option, shows each display's caps. With one, changes only the caps \
            named (on every display, or only --display N) and prints the new caps. Low Power Mode \
            and Limit Frame Rate each cap the refresh rate at 60 Hz; thermal serious and critical \
            cap at 60 Hz. Changing caps is privileged: the daemon's refusal names the group \
            whose members may do it.

            Examples:
              framectl caps
              framectl caps --low-power on
              framectl caps --display 0 --thermal serious --limit-frame-rate off
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(help: ArgumentHelp("Only this display (default: every display).", valueName: "n"))
    var display: Int?

    @Option(name: .customLong("low-power"), help: ArgumentHelp("Low Power Mode (caps at 60 Hz).", valueName: "on|off"))
    var lowPower: Switch?

    @Option(help: ArgumentHelp("The Limit Frame Rate accessibility setting (caps at 60 Hz).", valueName: "on|off"))
    var limitFrameRate: Switch?

    @Option(help: ArgumentHelp("The thermal state.", valueName: "nominal|fair|serious|critical"))
    var thermal: ThermalArgument?

    @Flag(help: "Print the daemon's result as one compact JSON line.")
    var json = false

    func validate() throws {
        _ = try ArgumentRules.display(display)
    }

    /// The SetCaps request the options describe, or `nil` when they change nothing.
    func request() throws -> SetCapsRequest? {
        guard lowPower != nil || limitFrameRate != nil || thermal != nil else { return nil }
        return SetCapsRequest(
            display: try ArgumentRules.display(display), lowPowerMode: lowPower?.isOn,
            limitFrameRate: limitFrameRate?.isOn, thermalState: thermal?.state
        )
    }

    func run() async throws {
        let connection = try await global.connect()
        guard let request = try request() else {
            let state = try await connection.state()
            await connection.close()
            let displays = state.displays.filter { display == nil || $0.id.rawValue == display }
            if let display, displays.isEmpty {
                throw CommandFailure("there is no display \(display); `framectl status` lists the displays")
            }
            if json {
                Console.out(SetCapsResult(displays: displays.map { ($0.id, $0.caps) }).jsonValue.jsonString)
            } else {
                for state in displays { Console.out(CapsText.line(display: state.id, caps: state.caps)) }
            }
            return
        }
        let result = try await connection.setCaps(request)
        await connection.close()
        if json {
            Console.out(result.jsonValue.jsonString)
        } else {
            for (display, caps) in result.displays { Console.out(CapsText.line(display: display, caps: caps)) }
        }
    }
}

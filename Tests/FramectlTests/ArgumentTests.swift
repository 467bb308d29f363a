import ArgumentParser
import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// The message of the `ValidationError` `body` throws, or `nil` when it does not throw.
private func validationMessage<Value>(_ body: () throws(ValidationError) -> Value) -> String? {
    do throws(ValidationError) {
        _ = try body()
        return nil
    } catch {
        return error.message
    }
}

@Suite("framectl argument rules")
struct ArgumentRuleTests {
    @Test("a valid range is built unchanged")
    func validRange() throws {
        let range = try ArgumentRules.range(minimum: 80, maximum: 120, preferred: 120)
        #expect(range == (try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)))
        #expect(try ArgumentRules.range(minimum: 10, maximum: 120, preferred: 0).preferred == 0)
    }

    @Test(
        "every range rule is named in the message, with the unit of the options",
        arguments: [
            (80.0, 60.0, 0.0, "invalid range: maximum (60 Hz) must be at least minimum (80 Hz) (--min, --max, --preferred are in Hz)"),
            (0.0, 60.0, 0.0, "invalid range: minimum must be at least 0.01 Hz (the lowest accepted rate), got 0 (--min, --max, --preferred are in Hz)"),
            (-5.0, 60.0, 0.0, "invalid range: minimum must be at least 0.01 Hz (the lowest accepted rate), got -5 (--min, --max, --preferred are in Hz)"),
            (
                10.0, 2000.0, 0.0,
                "invalid range: maximum must be at most 1000 Hz (the highest accepted rate), got 2000 (--min, --max, --preferred are in Hz)"
            ),
            (
                30.0, 60.0, 120.0,
                "invalid range: preferred must be 0 (no preference) or within minimum...maximum (30...60 Hz), got 120 "
                    + "(--min, --max, --preferred are in Hz)"
            ),
            (
                .nan, 60.0, 0.0,
                "invalid range: minimum must be a finite number of Hz, got nan (--min, --max, --preferred are in Hz)"
            ),
            (
                10.0, .infinity, 0.0,
                "invalid range: maximum must be a finite number of Hz, got inf (--min, --max, --preferred are in Hz)"
            ),
        ] as [(Double, Double, Double, String)]
    )
    func rangeRules(minimum: Double, maximum: Double, preferred: Double, message: String) {
        #expect(validationMessage { () throws(ValidationError) in try ArgumentRules.range(minimum: minimum, maximum: maximum, preferred: preferred) } == message)
    }

    @Test("display and count bounds")
    func displayAndCount() throws {
        #expect(try ArgumentRules.display(nil) == nil)
        #expect(try ArgumentRules.display(0) == DisplayID(rawValue: 0))
        #expect(try ArgumentRules.display(3) == DisplayID(rawValue: 3))
        #expect(
            validationMessage { () throws(ValidationError) in try ArgumentRules.display(-1) }
                == "--display must be 0 or more (0 is the default display), got -1"
        )
        #expect(try ArgumentRules.count(nil) == nil)
        #expect(try ArgumentRules.count(1) == 1)
        #expect(validationMessage { () throws(ValidationError) in try ArgumentRules.count(0) } == "--count must be at least 1, got 0")
    }

    @Test("call params: an object or an array, or none")
    func params() throws {
        #expect(try ArgumentRules.params(nil) == nil)
        #expect(try ArgumentRules.params(#"{"link":3}"#) == ["link": 3])
        #expect(try ArgumentRules.params("[1,2]") == [1, 2])
        #expect(
            validationMessage { () throws(ValidationError) in try ArgumentRules.params("3") }
                == "params must be a JSON object or array, got number"
        )
        #expect(
            validationMessage { () throws(ValidationError) in try ArgumentRules.params(#""x""#) }
                == "params must be a JSON object or array, got string"
        )
        let broken = try #require(validationMessage { () throws(ValidationError) in try ArgumentRules.params("{link:3}") })
        #expect(broken.hasPrefix("params are not valid JSON: "))
        #expect(broken.hasSuffix(#"; quote them for the shell, e.g. '{"link":3}'"#))
    }

    @Test("on|off switches")
    func switches() {
        #expect(Switch(argument: "on") == .on)
        #expect(Switch(argument: "off") == .off)
        #expect(Switch(argument: "yes") == nil)
        #expect(Switch(argument: "ON") == nil)
        #expect(Switch.on.isOn)
        #expect(!Switch.off.isOn)
        #expect(Switch.allValueStrings == ["on", "off"])
    }

    @Test("thermal names are the model's, one for one")
    func thermalNames() {
        #expect(ThermalArgument.allValueStrings == ["nominal", "fair", "serious", "critical"])
        #expect(ThermalArgument.allCases.map(\.state) == ThermalState.allCases)
        for state in ThermalState.allCases {
            #expect(ThermalArgument(argument: state.rawValue)?.state == state)
        }
        #expect(ThermalArgument(argument: "hot") == nil)
    }
}

@Suite("framectl command-line parsing")
struct CommandParsingTests {
    @Test("caps: only the caps named change; none named means show")
    func capsRequest() throws {
        let command = try CapsCommand.parse(["--low-power", "on", "--thermal", "serious", "--display", "1"])
        #expect(try command.request() == SetCapsRequest(display: DisplayID(rawValue: 1), lowPowerMode: true, thermalState: .serious))
        let off = try CapsCommand.parse(["--limit-frame-rate", "off"])
        #expect(try off.request() == SetCapsRequest(limitFrameRate: false))
        #expect(try CapsCommand.parse([]).request() == nil)
        #expect(try CapsCommand.parse(["--display", "0"]).request() == nil)
    }

    @Test("caps: a bad switch or thermal name is a usage error that lists the choices")
    func capsBadValues() {
        for arguments in [["--low-power", "maybe"], ["--thermal", "hot"], ["--display", "-1"]] {
            do {
                _ = try CapsCommand.parse(arguments)
                Issue.record("\(arguments) parsed")
            } catch {
                #expect(CapsCommand.exitCode(for: error) == .validationFailure, "\(arguments)")
            }
        }
        #expect(throws: (any Error).self) { try CapsCommand.parse(["--low-power", "maybe"]) }
        do {
            _ = try CapsCommand.parse(["--thermal", "hot"])
        } catch {
            let message = CapsCommand.message(for: error)
            for name in ["nominal", "fair", "serious", "critical"] { #expect(message.contains(name), "\(message)") }
        }
    }

    @Test("register: the range is validated while parsing, before any daemon is contacted")
    func registerValidation() throws {
        do {
            _ = try RegisterCommand.parse(["--min", "80", "--max", "60"])
            Issue.record("an inverted range parsed")
        } catch {
            #expect(RegisterCommand.exitCode(for: error) == .validationFailure)
            #expect(RegisterCommand.message(for: error).contains("maximum (60 Hz) must be at least minimum (80 Hz)"))
        }
        let command = try RegisterCommand.parse(["--min", "80", "--max", "120", "--preferred", "120", "--high-frame-rate", "--count", "5", "--json"])
        #expect(command.minimum == 80 && command.maximum == 120 && command.preferred == 120)
        #expect(command.highFrameRate && command.json && !command.paused)
        #expect(command.count == 5)
        #expect(throws: (any Error).self) { try RegisterCommand.parse(["--min", "80", "--max", "120", "--count", "0"]) }
    }

    @Test("register: the high-frame-rate entitlement is declared by default; --no-high-frame-rate drops it, the last flag wins")
    func registerEntitlement() throws {
        #expect(try RegisterCommand.parse(["--min", "80", "--max", "120"]).highFrameRate)
        #expect(try RegisterCommand.parse(["--min", "80", "--max", "120", "--high-frame-rate"]).highFrameRate)
        #expect(try !RegisterCommand.parse(["--min", "80", "--max", "120", "--no-high-frame-rate"]).highFrameRate)
        #expect(try RegisterCommand.parse(["--min", "80", "--max", "120", "--no-high-frame-rate", "--high-frame-rate"]).highFrameRate)
        let help = RegisterCommand.helpMessage(columns: 200)
        #expect(help.contains("--high-frame-rate/--no-high-frame-rate"), "\(help)")
        #expect(help.contains("declares the high-frame-rate entitlement by default"), "\(help)")
    }

    @Test("call: params are checked while parsing")
    func callValidation() throws {
        #expect(try CallCommand.parse(["framerate.v1.Compositor/GetState", "{}"]).params == "{}")
        #expect(try CallCommand.parse(["framerate.v1.Compositor/GetState"]).params == nil)
        #expect(throws: (any Error).self) { try CallCommand.parse(["framerate.v1.Compositor/GetState", "42"]) }
    }
}

@Suite("framectl global option hoisting")
struct ArgumentOrderTests {
    @Test(
        "a leading --socket moves after the subcommand name",
        arguments: [
            (["--socket", "/tmp/s", "status"], ["status", "--socket", "/tmp/s"]),
            (["--socket", "/tmp/s", "status", "--json"], ["status", "--socket", "/tmp/s", "--json"]),
            (["--socket=/tmp/s", "caps", "--low-power", "on"], ["caps", "--socket=/tmp/s", "--low-power", "on"]),
            (["--socket", "/a", "--socket=/b", "health"], ["health", "--socket", "/a", "--socket=/b"]),
        ]
    )
    func hoisted(arguments: [String], expected: [String]) {
        #expect(ArgumentOrder.hoistingGlobalOptions(arguments) == expected)
    }

    @Test(
        "anything else is left as it is",
        arguments: [
            [],
            ["status"],
            ["status", "--socket", "/tmp/s"],
            ["--socket", "/tmp/s"],
            ["--socket"],
            ["--socket", "/tmp/s", "--help"],
            ["--socket", "/tmp/s", "help"],
            ["--json", "--socket", "/tmp/s", "status"],
        ]
    )
    func unchanged(arguments: [String]) {
        #expect(ArgumentOrder.hoistingGlobalOptions(arguments) == arguments)
    }

    @Test("the hoisted line parses to the subcommand with its socket")
    func parsesAfterHoisting() throws {
        let command = try Framectl.parseAsRoot(ArgumentOrder.hoistingGlobalOptions(["--socket", "/tmp/s", "status", "--json"]))
        let status = try #require(command as? StatusCommand)
        #expect(status.global.socket == "/tmp/s")
        #expect(status.json)
        let equals = try Framectl.parseAsRoot(ArgumentOrder.hoistingGlobalOptions(["--socket=/tmp/t", "health"]))
        #expect((equals as? HealthCommand)?.global.socket == "/tmp/t")
    }
}

import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// `framectl boost LINK --duration S`: boost a link by hand.
struct BoostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boost",
        abstract: "Boost a display link for a few seconds, as an app does while the user scrolls.",
        discussion: """
            Sends DisplayLink/Boost for LINK (a link of one of your own processes, e.g. one \
            `framectl register` holds; `framectl status` lists the ids). For --duration seconds \
            (0 < S <= 5) the link votes --min...--max (default: its own maximum as minimum, \
            maximum and preferred rate) instead of its own range; its ticks carry \
            "boosted":true meanwhile. A further boost only ever moves the end later. When it \
            ends the display falls back through the normal decrease dwell. Prints the link's \
            rates while boosted and when the boost ends; if the boost gets less than it asked \
            for (no entitlement, a cap), one line on stderr says why.

            Examples:
              framectl boost 3 --duration 2
              framectl boost 3 --duration 1 --min 80 --max 80 --preferred 80
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Argument(help: ArgumentHelp("The link's id.", valueName: "link"))
    var link: UInt64

    @Option(help: ArgumentHelp("How long the boost lasts, seconds (0 < s <= 5).", valueName: "s"))
    var duration: Double

    @Option(name: .customLong("min"), help: ArgumentHelp("Boost range minimum, Hz (with --max).", valueName: "hz"))
    var minimum: Double?

    @Option(name: .customLong("max"), help: ArgumentHelp("Boost range maximum, Hz (with --min).", valueName: "hz"))
    var maximum: Double?

    @Option(help: ArgumentHelp("Boost range preferred rate, Hz; 0 means no preference.", valueName: "hz"))
    var preferred: Double = 0

    @Flag(help: "Print the daemon's result as one compact JSON line.")
    var json = false

    func validate() throws {
        guard link >= 1 else { throw ValidationError("a link id is at least 1; `framectl status` lists the links") }
        guard duration.isFinite, duration > 0, duration <= BoostRequest.maximumDuration else {
            throw ValidationError("--duration must be seconds with 0 < s <= 5, got \(duration)")
        }
        _ = try boostRange()
    }

    /// The boost range the options give, or `nil` for the daemon's default.
    func boostRange() throws -> FrameRateRange? {
        switch (minimum, maximum) {
        case (nil, nil):
            guard preferred == 0 else { throw ValidationError("--preferred needs --min and --max") }
            return nil
        case (let minimum?, let maximum?):
            return try ArgumentRules.range(minimum: minimum, maximum: maximum, preferred: preferred)
        default:
            throw ValidationError("give both --min and --max for a boost range, or neither for the link's maximum")
        }
    }

    func run() async throws {
        let connection = try await global.connect()
        let result = try await connection.boost(link: LinkID(rawValue: link), duration: duration, range: try boostRange())
        await connection.close()
        if json {
            Console.out(result.jsonValue.jsonString)
            return
        }
        let status = result.status
        let left = result.boostedUntil - MonotonicClock.now.seconds
        Console.out(
            "link \(link) boosted until \(Fixed.format(result.boostedUntil, decimals: 3)) (\(Fixed.format(Swift.max(0, left), decimals: 3)) s from now): "
                + "refresh \(FrameRateMath.format(status.refreshRate)) Hz, callbacks \(FrameRateMath.format(status.callbackRate)) Hz"
        )
        if let limit = status.limit { Console.error(LimitText.line(limit, cap: status.decision?.cap)) }
    }
}

import ArgumentParser
import FrameRateClient
import FrameRateProtocol

/// `framectl status`: displays, rates, reasons, caps and links.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each display's refresh rate, why, its caps, and every link.",
        discussion: """
            For each display: the refresh rate in force (Hz), its profile and supported rates, \
            the reason arbitration gives, then its decision: the rule (the step of the \
            arbitration ladder that chose the rate), the links that hold the display there \
            (with the pid and command of their process), the cap in force, every link that \
            gets less than it asked for and why, and a change already decided but not yet in \
            force. Then the power and thermal caps, and a table of links with their range (Hz; \
            hfr: the link declared the high-frame-rate entitlement), callback rate (or \
            paused), label, the pid, uid and command of the process holding them, and how long \
            ago they were registered. Under the table: each presenting link's hitches, and \
            each link held back until its client answers its latest tick (FrameDone or \
            Present): that tick, how long ago, and the intervals it cost. --json prints the \
            GetState result as is: each display's `decision` object and each link's `since` \
            (CLOCK_MONOTONIC seconds).

            Examples:
              framectl status
              framectl status --json | jq '.displays[0].decision'
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Flag(help: "Print the daemon's GetState result as one compact JSON line.")
    var json = false

    func run() async throws {
        let (result, decode) = try await global.fetchState()
        if json {
            Console.out(result.jsonString)
            return
        }
        let state = try decode()
        // The daemon's own time when it says it (a virtual clock's stands apart from ours).
        for line in StatusText.lines(for: state, now: state.now ?? MonotonicClock.now.seconds) { Console.out(line) }
    }
}

import ArgumentParser
import FrameRateClient
import FrameRateModel
import FrameRateProtocol

/// `framectl top`: a live view of each display, refreshed every second.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "A live view of each display's rate, decision, links and residency holders.",
        discussion: """
            Refreshes every second: each display's refresh rate and decision (rule and \
            reason), its links with their callback rate, the ticks and skipped intervals per \
            second measured over the last second (from the daemon's trace stream), and their \
            hitch ratio (ms of hitches per second, rated: under 5 good, 5-10 noticeable, over \
            10 bad), then the top residency holders. Quits on q or Ctrl-C. Fits an 80x24 \
            terminal; when stdout is not a terminal it prints plain screens, one per second, \
            separated by a line of dashes (--iterations bounds them).

            Examples:
              framectl top
              framectl top --iterations 3 > top.txt
            """
    )

    @OptionGroup var global: ConnectionOptions

    @Option(help: "Stop after this many screens (default: until q or Ctrl-C).")
    var iterations: Int?

    func validate() throws {
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
    }

    func run() throws {
        let session = try LineSession.connectTrusted(socketPath: global.socket)
        defer { session.socket.close() }
        var counts: [LinkID: TopText.LinkRates] = [:]
        let count: (UnsafeRawBufferPointer) -> Void = { line in
            guard let batch = TraceCommand.records(in: line) else { return }
            for case .tick(_, let link, _, _, _, let skipped, _) in batch.records {
                counts[link, default: .init(ticks: 0, skipped: 0)].ticks += 1
                counts[link, default: .init(ticks: 0, skipped: 0)].skipped += Double(skipped)
            }
        }
        let started = try TraceCommand.call(session, .trace, params: JSONValue.object([:]), collect: count)
        guard let trace = started["trace"]?.int64Value, trace > 0 else { throw CommandFailure("the daemon's Trace reply has no trace id") }
        let interactive = Terminal.isInteractive
        let terminal = Terminal()
        if interactive { terminal.enterRawMode() }
        defer { terminal.restore() }
        var screens = 0
        var last = MonotonicClock.nowNanoseconds
        counts = [:]
        refresh: while iterations.map({ screens < $0 }) ?? true {
            let deadline = last + 1_000_000_000
            while MonotonicClock.nowNanoseconds < deadline {
                if interactive, let key = Terminal.pendingKey(), key == UInt8(ascii: "q") || key == 3 { break refresh }
                let line: String?
                do {
                    line = try session.readLine(deadline: min(deadline, MonotonicClock.nowNanoseconds + 100_000_000))
                } catch .timedOut {
                    continue
                } catch {
                    throw CommandFailure("the connection to the daemon failed: \(error)")
                }
                guard let line else { throw CommandFailure("the daemon closed the connection") }
                let bytes = Array(line.utf8)
                bytes.withUnsafeBytes { count($0) }
            }
            let result = try TraceCommand.call(session, .getState, params: JSONValue.object([:]), collect: count)
            let now = MonotonicClock.nowNanoseconds
            let elapsed = Double(now - last) / 1e9
            last = now
            let rates = counts.mapValues { TopText.LinkRates(ticks: $0.ticks / elapsed, skipped: $0.skipped / elapsed) }
            counts = [:]
            let state: CompositorState
            do {
                state = try CompositorState(json: result)
            } catch {
                throw CommandFailure("an unreadable GetState result: \(error.message)")
            }
            let size = interactive ? Terminal.size : (width: 80, height: Int.max)
            let lines = TopText.lines(state: state, rates: rates, clock: Terminal.clock(), width: size.width, height: size.height)
            if interactive {
                Console.raw("\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\n"))
            } else {
                if screens > 0 { Console.out(String(repeating: "-", count: 80)) }
                for line in lines { Console.out(line) }
            }
            screens += 1
        }
        _ = try? TraceCommand.call(session, .stopTrace, params: ["trace": JSONValue(UInt64(trace))], collect: { _ in })
    }
}

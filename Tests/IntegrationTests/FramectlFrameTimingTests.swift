import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

/// framectl's frame-timing flags and `advance` against real daemons (issue 14 from the
/// command line): `register --timelines --latency`, and `advance` on a virtual clock.
@Suite("framectl: frame timelines, latency and virtual time", .serialized)
struct FramectlFrameTimingTests {
    @Test("register --timelines 3 --latency 2 --json: three timelines per tick, shown two intervals after the tick")
    func registerWithTimelinesAndLatency() async throws {
        let daemon = try await Daemon.start(["--display", "fixed-60"])
        defer { daemon.kill() }
        let run = try await daemon.framectl(["register", "--min", "60", "--max", "60", "--timelines", "3", "--latency", "2", "--count", "4", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let ticks = try run.stdout.dropFirst().map { try JSONValue(parsing: $0) }
        try #require(ticks.count == 4, "\(run.stdout)")
        for tick in ticks {
            let timestamp = try #require(tick["timestamp"]?.doubleValue)
            let presentation = try #require(tick["targetPresentationTimestamp"]?.doubleValue)
            #expect(abs(presentation - (timestamp + 2.0 / 60)) < 2e-9, "\(tick.jsonString)")
            let timelines = try #require(tick["timelines"]?.arrayValue)
            #expect(timelines.count == 3, "\(tick.jsonString)")
            #expect(timelines.first?["presentationTime"]?.doubleValue == presentation)
        }
    }

    @Test("register rejects --timelines 8 and --latency 3 before contacting any daemon")
    func frameTimingIsCheckedLocally() async throws {
        let daemon = try await Daemon.start()
        daemon.kill()
        let timelines = try await daemon.framectl(["register", "--min", "60", "--max", "60", "--timelines", "8"])
        #expect(timelines.status == 2 && timelines.stderr.contains("--timelines must be 1 to 7"), "\(timelines.stderr)")
        let latency = try await daemon.framectl(["register", "--min", "60", "--max", "60", "--latency", "3"])
        #expect(latency.status == 2 && latency.stderr.contains("--latency must be 1 or 2"), "\(latency.stderr)")
    }

    @Test("advance moves a virtual-clock daemon's time and prints the new now; a monotonic daemon refuses")
    func advance() async throws {
        let virtual = try await Daemon.start(["--clock", "virtual"])
        defer { virtual.kill() }
        let first = try await virtual.framectl(["advance", "0.5", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let firstLine = try #require(first.stdout.first)
        let start = try #require(try JSONValue(parsing: firstLine)["now"]?.doubleValue)
        let second = try await virtual.framectl(["advance", "0.25"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == ["virtual time now \(FrameRateMath.format(start + 0.25)) s"], "\(second.stdout)")

        let monotonic = try await Daemon.start()
        defer { monotonic.kill() }
        let refused = try await monotonic.framectl(["advance", "1"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("FAILED_PRECONDITION") || refused.stderr.contains("virtual"), "\(refused.stderr)")
        let tooFar = try await monotonic.framectl(["advance", "100000"])
        #expect(tooFar.status == 2 && tooFar.stderr.contains("from 0 to 86400"), "\(tooFar.stderr)")
    }
}

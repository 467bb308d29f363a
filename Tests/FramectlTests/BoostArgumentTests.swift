import ArgumentParser
import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// `framectl boost` and `framectl register --adaptive`, parsed and validated without a daemon.
@Suite("framectl boost and --adaptive")
struct BoostArgumentTests {
    @Test("boost takes a link, a duration and an optional range")
    func parsesBoost() throws {
        let plain = try #require(try Framectl.parseAsRoot(["boost", "3", "--duration", "0.5"]) as? BoostCommand)
        #expect(plain.link == 3 && plain.duration == 0.5)
        #expect(try plain.boostRange() == nil)
        let ranged = try #require(
            try Framectl.parseAsRoot(["boost", "3", "--duration", "1", "--min", "80", "--max", "120", "--preferred", "120"]) as? BoostCommand
        )
        #expect(try ranged.boostRange() == (try FrameRateRange(minimum: 80, maximum: 120, preferred: 120)))
    }

    @Test("a duration outside (0, 5], link 0 or half a range is a usage error before any daemon is asked", arguments: [
        ["boost", "3", "--duration", "0"],
        ["boost", "3", "--duration", "5.5"],
        ["boost", "3", "--duration", "nan"],
        ["boost", "0", "--duration", "1"],
        ["boost", "3", "--duration", "1", "--min", "80"],
        ["boost", "3", "--duration", "1", "--preferred", "80"],
        ["boost", "3", "--duration", "1", "--min", "90", "--max", "80"],
        ["boost", "3"],
    ])
    func refusesBadBoosts(arguments: [String]) {
        #expect(throws: (any Error).self) { try Framectl.parseAsRoot(arguments) }
    }

    @Test("register --adaptive")
    func registerAdaptive() throws {
        let command = try #require(try Framectl.parseAsRoot(["register", "--min", "120", "--max", "120", "--adaptive"]) as? RegisterCommand)
        #expect(command.adaptive)
        let plain = try #require(try Framectl.parseAsRoot(["register", "--min", "120", "--max", "120"]) as? RegisterCommand)
        #expect(!plain.adaptive)
    }

    @Test("a stepped-down limit is explained on stderr")
    func overrunLine() {
        let line = LimitText.line(LinkLimit(link: LinkID(rawValue: 2), by: .overrun, wanted: 120, got: 60), cap: nil)
        #expect(line == "stepped down to 60 Hz: this adaptive link's frames kept missing their deadline (it steps back up once they fit)")
    }
}

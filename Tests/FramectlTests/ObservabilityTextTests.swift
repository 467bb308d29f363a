import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// `framectl status`'s hitch rating and `framectl residency`'s table and bars.
@Suite struct ObservabilityTextTests {
    @Test func hitchRatiosAreRatedOnTheGuidesScale() {
        #expect(HitchText.rating(0) == "good")
        #expect(HitchText.rating(4.99) == "good")
        #expect(HitchText.rating(5) == "noticeable")
        #expect(HitchText.rating(10) == "noticeable")
        #expect(HitchText.rating(10.01) == "bad")
        let summary = HitchSummary(
            frames: 1234, late: 5, dropped: 1, hitchTime: .microseconds(41_700), ratioMillisecondsPerSecond: 3.2, window: .seconds(10)
        )
        #expect(
            HitchText.describe(link: LinkID(rawValue: 3), summary)
                == "link 3: 3.2 ms/s (good) over 10 s; 1234 frames, 5 late, 1 dropped, 41.7 ms of hitches"
        )
    }

    @Test func residencyShowsATableBarsAndHolders() throws {
        let json: JSONValue = [
            "id": 0, "profile": "promotion-phone", "refreshRate": 60.0, "reason": "", "caps": [:], "links": [], "uptime": 20.0,
            "residency": [
                [
                    "rate": 120.0, "seconds": 15.0,
                    "heldBy": [["link": 3, "pid": 4242, "uid": 1000, "command": "scroller", "label": "list", "seconds": 15.0]],
                ],
                ["rate": 60.0, "seconds": 5.0, "heldBy": [["link": nil, "reason": "idle", "seconds": 5.0]]],
            ],
        ]
        let display = try DisplayState(json: json)
        let lines = ResidencyText.lines(for: display)
        #expect(
            lines == [
                "display 0: 20.0 s since start, now 60 Hz",
                "  RATE    TIME    SHARE  BAR",
                "  120 Hz  15.0 s  75.0%  " + String(repeating: "█", count: 22) + "▌",
                "  60 Hz   5.0 s   25.0%  " + String(repeating: "█", count: 7) + "▌",
                "  held by:",
                "    120 Hz",
                "      15.0 s    link 3 'list' (pid 4242 scroller)",
                "    60 Hz",
                "      5.0 s     idle (no link voted)",
            ]
        )
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(ResidencyText.bar(1).count == ResidencyText.barWidth)
        #expect(ResidencyText.bar(0) == "")
    }

    @Test func topFitsEightyByTwentyFour() throws {
        var links: [JSONValue] = []
        for index in 1...40 {
            links.append([
                "link": .number(JSONNumber(index)), "range": ["minimum": 80.0, "maximum": 120.0, "preferred": 120.0],
                "callbackRate": 120.0, "pid": 4242, "uid": 0, "command": "a-very-long-command-name", "label": .string("label \(index)"),
                "hitches": index == 1
                    ? ["frames": 100, "late": 3, "dropped": 0, "timeMs": 50.0, "ratioMsPerS": 12.5, "window": 10.0] : nil,
            ])
        }
        let display: JSONValue = [
            "id": 0, "profile": "promotion-phone", "refreshRate": 120.0, "caps": [:], "links": .array(links),
            "reason": .string(String(repeating: "a long reason ", count: 20)), "uptime": 10.0,
            "residency": [["rate": 120.0, "seconds": 10.0, "heldBy": [["link": 1, "pid": 4242, "uid": 0, "command": "x", "label": "l", "seconds": 10.0]]]],
        ]
        let state = CompositorState(displays: [try DisplayState(json: display)])
        let lines = TopText.lines(
            state: state, rates: [LinkID(rawValue: 1): .init(ticks: 119.5, skipped: 0.5)], clock: "12:00:00", width: 80, height: 24
        )
        #expect(lines.count == 24)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.contains { $0.contains("119.5") && $0.contains("12.5 bad") && $0.contains("a-very-long…") })
        #expect(lines.last?.hasPrefix("… ") == true)
    }
}

import FrameRateClient
import FrameRateModel
import FrameRateProtocol
import Testing

@testable import framectl

/// A 120 Hz tick of link 3: vsync at `timestamp`, deadline 1/120 s later.
private func tick(sequence: UInt64 = 42, timestamp: Double, skipped: UInt64 = 0) -> TickNotification {
    TickNotification(
        link: LinkID(rawValue: 3), sequence: sequence, timestamp: timestamp, targetTimestamp: timestamp + 0.008334,
        duration: 1.0 / 120, refreshRate: 120, callbackRate: 120, skipped: skipped
    )
}

@Suite("framectl tick output")
struct TickFormattingTests {
    @Test("human: sequence, time, target, working time left, measured rate, skipped")
    func human() {
        let line = TickText.human(tick(timestamp: 5012.345678), previousTimestamp: 5012.337345, now: 5012.3464)
        #expect(line == "tick 42  time 5012.345678  target 5012.354012  left 7.612 ms  rate 120.00 Hz  skipped 0")
    }

    @Test("human: no rate on the first tick or when time did not advance; a missed deadline is negative")
    func humanEdges() {
        #expect(
            TickText.human(tick(sequence: 0, timestamp: 10), previousTimestamp: nil, now: 10.001)
                == "tick 0  time 10.000000  target 10.008334  left 7.334 ms  rate -  skipped 0"
        )
        #expect(TickText.human(tick(timestamp: 10), previousTimestamp: 10, now: 10).contains("rate -"))
        #expect(TickText.human(tick(timestamp: 10, skipped: 2), previousTimestamp: 9.975, now: 10.010834).hasSuffix("left -2.500 ms  rate 40.00 Hz  skipped 2"))
    }

    @Test("json: the tick's params plus workingTime in seconds")
    func json() throws {
        let tick = TickNotification(
            link: LinkID(rawValue: 3), sequence: 7, timestamp: 100.5, targetTimestamp: 100.5078125, duration: 0.0078125,
            refreshRate: 128, callbackRate: 128, skipped: 1
        )
        let line = TickText.json(tick, now: 100.50390625)
        #expect(
            line
                == #"{"link":3,"sequence":7,"timestamp":100.5,"targetTimestamp":100.5078125,"duration":0.0078125,"#
                + #""refreshRate":128.0,"callbackRate":128.0,"skipped":1,"targetPresentationTimestamp":100.5078125,"workingTime":0.00390625}"#
        )
        let parsed = try JSONValue(parsing: line)
        #expect(try TickNotification(json: parsed) == tick)
        #expect(TickText.json(tick, now: 100.51171875).hasSuffix(#""workingTime":-0.00390625}"#))
    }

    @Test("the printer measures the rate from the previous tick it printed")
    func printer() {
        var printer = TickPrinter(json: false)
        let first = printer.line(for: tick(sequence: 1, timestamp: 20), now: 20)
        #expect(first.contains("rate -"))
        #expect(printer.previousTimestamp == 20)
        let second = printer.line(for: tick(sequence: 2, timestamp: 20.0125), now: 20.0125)
        #expect(second.contains("rate 80.00 Hz"))
        var json = TickPrinter(json: true)
        #expect(json.line(for: tick(timestamp: 1), now: 1).hasPrefix(#"{"link":3,"sequence":42,"#))
    }

    @Test("registration lines")
    func registration() {
        #expect(
            TickText.registration(link: LinkID(rawValue: 3), display: DisplayID(rawValue: 0), refreshRate: 120, callbackRate: 60)
                == "link 3 on display 0: refresh 120 Hz, callback 60 Hz"
        )
        #expect(
            TickText.registration(link: LinkID(rawValue: 1), display: DisplayID(rawValue: 2), refreshRate: 23.976, callbackRate: 23.976)
                == "link 1 on display 2: refresh 23.976 Hz, callback 23.976 Hz"
        )
        #expect(
            TickText.registrationJSON(
                link: LinkID(rawValue: 3), display: DisplayID(rawValue: 0), refreshRate: 120, callbackRate: 60, decision: nil, limit: nil
            )
                == #"{"link":3,"refreshRate":120.0,"callbackRate":60.0,"decision":null,"limitedBy":null,"wanted":null,"got":null,"display":0}"#
        )
    }

    @Test(
        "fixed-point numbers",
        arguments: [
            (7.91234, 3, "7.912"), (0, 3, "0.000"), (-0.0004, 3, "0.000"), (-1.5, 3, "-1.500"),
            (120.004, 2, "120.00"), (2.5, 0, "3"), (5012.345678, 6, "5012.345678"), (0.25, 1, "0.3"),
        ] as [(Double, Int, String)]
    )
    func fixed(value: Double, decimals: Int, expected: String) {
        #expect(Fixed.format(value, decimals: decimals) == expected)
    }

    @Test("fixed-point falls back for values it cannot scale")
    func fixedFallback() {
        #expect(Fixed.format(.nan, decimals: 3) == "nan")
        #expect(Fixed.format(.infinity, decimals: 3) == "inf")
        #expect(Fixed.format(1e300, decimals: 2) == "1e+300")
    }
}

@Suite("framectl text tables")
struct TextTableTests {
    @Test("columns are left-aligned, two spaces apart, the last column unpadded, no trailing spaces")
    func layout() {
        var table = TextTable(header: ["A", "LONGER", "C"])
        table.rows = [["wide cell", "x", "last"], ["", "", ""], ["1", "22", "333"]]
        #expect(
            table.lines(indent: "  ") == [
                "  A          LONGER  C",
                "  wide cell  x       last",
                "",
                "  1          22      333",
            ]
        )
        #expect(TextTable(header: ["ONLY"]).lines() == ["ONLY"])
    }
}

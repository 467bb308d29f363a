import Testing
import UntrustedText

@Suite("LogSanitizer: log values cannot forge lines or flood the log")
struct LogSanitizerTests {
    let sanitizer = LogSanitizer()

    @Test("a newline in a label cannot start a forged log line")
    func forgedLine() {
        let label = "x\n2026-01-01T00:00:00+0000 critical framerated: root password changed"
        let logged = sanitizer.sanitize(label)
        #expect(logged == "x\\n2026-01-01T00:00:00+0000 critical framerated: root password changed")
        #expect(!logged.contains("\n"))
    }

    @Test(
        "control characters are escaped",
        arguments: [
            ("a\rb", "a\\rb"), ("a\tb", "a\\tb"), ("nul\u{0}", "nul\\u{0}"), ("\u{1B}[31mred\u{1B}[0m", "\\u{1B}[31mred\\u{1B}[0m"),
            ("del\u{7F}", "del\\u{7F}"), ("c1\u{85}\u{9B}", "c1\\u{85}\\u{9B}"), ("ls\u{2028}ps\u{2029}", "ls\\u{2028}ps\\u{2029}"),
            ("bidi\u{202E}txt", "bidi\\u{202E}txt"), ("zw\u{200B}sp", "zw\\u{200B}sp"), ("bom\u{FEFF}", "bom\\u{FEFF}"),
            ("back\\slash", "back\\\\slash"),
        ]
    )
    func escapes(input: String, expected: String) {
        #expect(sanitizer.sanitize(input) == expected)
    }

    @Test("ordinary text, including non-ASCII letters and emoji, is kept as it is")
    func plain() {
        for text in ["link 3 registered (80, 120, 120) on display 0", "héllo wörld", "日本語", "🎬 video", ""] {
            #expect(sanitizer.sanitize(text) == text)
        }
    }

    @Test("a 1 MiB value is cut to 200 characters and says how long it was")
    func truncates() {
        let long = String(repeating: "m", count: 1_048_576)
        let logged = sanitizer.sanitize(long)
        #expect(logged == String(repeating: "m", count: 200) + "…(1048576 bytes)")
    }

    @Test("the limit counts escaped characters, so escaping cannot blow it up")
    func escapedLimit() {
        let newlines = String(repeating: "\n", count: 10_000)
        let logged = LogSanitizer(limit: 10).sanitize(newlines)
        #expect(logged == String(repeating: "\\n", count: 5) + "…(10000 bytes)")
        #expect(!logged.contains("\n"))
    }

    @Test("a value exactly at the limit is not marked")
    func exactLimit() {
        #expect(LogSanitizer(limit: 5).sanitize("abcde") == "abcde")
        #expect(LogSanitizer(limit: 5).sanitize("abcdef") == "abcde…(6 bytes)")
    }
}

@Suite("EchoedValue: error messages quote values as sent, briefly")
struct EchoedValueTests {
    @Test("invisible characters are named, not printed")
    func names() {
        #expect(EchoedValue.text("\u{FEFF}60") == "<U+FEFF BYTE ORDER MARK>60")
        #expect(EchoedValue.text("min\u{A0}imum") == "min<U+00A0 NO-BREAK SPACE>imum")
        #expect(EchoedValue.text("a\u{200B}b") == "a<U+200B ZERO WIDTH SPACE>b")
        #expect(EchoedValue.text("\u{0}\n\u{1B}") == "<U+0000 NULL><U+000A LINE FEED><U+001B ESCAPE>")
        #expect(EchoedValue.text("\u{202E}") == "<U+202E RIGHT-TO-LEFT OVERRIDE>")
        #expect(EchoedValue.text("\u{E000}") == "<U+E000>")
    }

    @Test("visible text, spaces included, is quoted as it is")
    func visible() {
        #expect(EchoedValue.text("framerate.v1.Nope/Method") == "framerate.v1.Nope/Method")
        #expect(EchoedValue.text("a b é 日本") == "a b é 日本")
    }

    @Test("long strings keep 32 characters and give their length")
    func longText() {
        let method = String(repeating: "x", count: 1_000_000)
        #expect(EchoedValue.text(method) == String(repeating: "x", count: 32) + "… (1000000 bytes)")
    }

    @Test("numbers: short ones verbatim, long ones cut with their digit count")
    func numbers() {
        #expect(EchoedValue.number("1000.0001") == "1000.0001")
        #expect(EchoedValue.number("1.7e308") == "1.7e308")
        let digits = String(repeating: "9", count: 100_000)
        #expect(EchoedValue.number(digits) == String(repeating: "9", count: 32) + "… (100000 digits)")
        #expect(EchoedValue.number("-" + digits) == "-" + String(repeating: "9", count: 31) + "… (100000 digits)")
        let fraction = "0." + String(repeating: "1", count: 50)
        #expect(EchoedValue.number(fraction) == String(fraction.prefix(32)) + "… (52 characters)")
    }
}

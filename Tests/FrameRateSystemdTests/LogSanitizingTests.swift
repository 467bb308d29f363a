import Logging
import Testing

@testable import FrameRateSystemd

/// Both log handlers escape and shorten every client-chosen value (issue 10 §5).
@Suite("Logged values cannot forge lines or flood the log")
struct LogSanitizingTests {
    static let forged = "x\n2026-01-01T00:00:00+0000 critical framerated: all links revoked"

    @Test("journal: MESSAGE and every FRAMERATED_* value are escaped")
    func journalEscapes() {
        let fields = JournalField.fields(
            message: "link 3 registered: \(Self.forged)", level: .info,
            metadata: ["label": .string(Self.forged), "command": "evil\u{1B}[2J\u{0}", "nested": ["k": .string("a\nb")]],
            identifier: "framerated", file: "f.swift", function: "f()", line: 1
        )
        let dictionary = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(dictionary["MESSAGE"] == "link 3 registered: x\\n2026-01-01T00:00:00+0000 critical framerated: all links revoked")
        #expect(dictionary["FRAMERATED_LABEL"] == "x\\n2026-01-01T00:00:00+0000 critical framerated: all links revoked")
        #expect(dictionary["FRAMERATED_COMMAND"] == "evil\\u{1B}[2J\\u{0}")
        #expect(dictionary["FRAMERATED_NESTED"]?.contains("\n") == false)
        for (_, value) in fields {
            #expect(!value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }, "\(value)")
        }
    }

    @Test("journal: a 1 MiB method name costs about 200 bytes")
    func journalTruncates() {
        let method = String(repeating: "m", count: 1_048_576)
        let message = "request rejected: \(method): Method not found"
        let fields = JournalField.fields(
            message: message, level: .info, metadata: ["method": .string(method)],
            identifier: "framerated", file: "f.swift", function: "f()", line: 1
        )
        let dictionary = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(dictionary["FRAMERATED_METHOD"] == String(repeating: "m", count: 200) + "…(1048576 bytes)")
        #expect(dictionary["MESSAGE"] == "request rejected: " + String(repeating: "m", count: 182) + "…(\(message.utf8.count) bytes)")
        #expect(fields.reduce(0) { $0 + $1.value.utf8.count } < 1_000)
    }

    @Test("stderr: one line, sorted metadata, message and values escaped")
    func standardErrorLine() {
        let line = StandardErrorLogHandler.line(
            timestamp: "2026-05-01T12:00:00+0000", level: .info, label: "framerated",
            metadata: ["pid": "42", "label": .string(Self.forged)], message: "link 3 registered\r\nfake line"
        )
        #expect(
            line == "2026-05-01T12:00:00+0000 info framerated: label=x\\n2026-01-01T00:00:00+0000 critical framerated: all links revoked pid=42 link 3 registered\\r\\nfake line"
        )
        #expect(!line.contains("\n") && !line.contains("\r"))
    }

    @Test("stderr: long values are cut with their length; bidi overrides and U+2028 are escaped")
    func standardErrorTruncates() {
        let line = StandardErrorLogHandler.line(
            timestamp: "", level: .warning, label: "framerated",
            metadata: ["command": .string(String(repeating: "c", count: 5_000))], message: "a\u{202E}b\u{2028}c"
        )
        #expect(line == "warning framerated: command=" + String(repeating: "c", count: 200) + "…(5000 bytes) a\\u{202E}b\\u{2028}c")
    }

    @Test("the stderr handler's timestamp is 2026-01-01T00:00:00+0000-shaped")
    func timestampShape() {
        let stamp = Array(StandardErrorLogHandler.timestamp().utf8)
        #expect(stamp.count == 24, "\(String(decoding: stamp, as: UTF8.self))")
        let punctuation: [Int: UInt8] = [4: UInt8(ascii: "-"), 7: UInt8(ascii: "-"), 10: UInt8(ascii: "T"), 13: UInt8(ascii: ":"), 16: UInt8(ascii: ":")]
        for (index, byte) in stamp.enumerated() {
            if let expected = punctuation[index] {
                #expect(byte == expected)
            } else if index == 19 {
                #expect(byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-"))
            } else {
                #expect((UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), "byte \(index)")
            }
        }
    }
}

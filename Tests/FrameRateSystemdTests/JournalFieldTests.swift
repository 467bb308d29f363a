import FrameRateSystemd
import Logging
import Testing

@Suite("Journal fields")
struct JournalFieldTests {
    @Test(
        "metadata keys become valid journal field names",
        arguments: [
            ("link", "FRAMERATED_LINK"), ("high_frame_rate", "FRAMERATED_HIGH_FRAME_RATE"), ("from-hz", "FRAMERATED_FROM_HZ"),
            ("_private", "FRAMERATED_PRIVATE"), ("__", "FRAMERATED_FIELD"), ("", "FRAMERATED_FIELD"), ("héllo wörld", "FRAMERATED_H_LLO_W_RLD"),
            ("pid", "FRAMERATED_PID"), ("a.b:c", "FRAMERATED_A_B_C"),
        ]
    )
    func names(key: String, expected: String) {
        #expect(JournalField.name(forMetadataKey: key) == expected)
    }

    @Test("every generated name is one journald accepts")
    func validity() {
        for key in ["x", String(repeating: "long", count: 40), "Ünïcødé", "9lives", "_", "a b", "ok_OK_09"] {
            let name = JournalField.name(forMetadataKey: key)
            #expect(name.utf8.count <= 64)
            #expect(!name.hasPrefix("_"))
            #expect(name.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }, "\(name)")
        }
    }

    @Test("priorities follow syslog")
    func priorities() {
        #expect(Logger.Level.allCases.map(JournalField.priority(of:)) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test("a registration line carries MESSAGE, PRIORITY, CODE_*, SYSLOG_IDENTIFIER, MESSAGE_ID and FRAMERATED_* fields")
    func registrationFields() {
        let fields = JournalField.fields(
            message: "link 3 registered (80, 120, 120) on display 0", level: .info,
            metadata: ["event": "link-registered", "link": "3", "pid": "4242", "command": "python3"],
            identifier: "framerated", file: "Server/Requests.swift", function: "register(_:)", line: 42
        )
        let dictionary = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(dictionary["MESSAGE"] == "link 3 registered (80, 120, 120) on display 0")
        #expect(dictionary["PRIORITY"] == "6")
        #expect(dictionary["CODE_FILE"] == "Server/Requests.swift")
        #expect(dictionary["CODE_LINE"] == "42")
        #expect(dictionary["CODE_FUNC"] == "register(_:)")
        #expect(dictionary["SYSLOG_IDENTIFIER"] == "framerated")
        #expect(dictionary["MESSAGE_ID"] == "0e8b3a5c7d2f4e1a9b6c8d0f2a4e6b13")
        #expect(dictionary["FRAMERATED_EVENT"] == "link-registered")
        #expect(dictionary["FRAMERATED_LINK"] == "3")
        #expect(dictionary["FRAMERATED_PID"] == "4242")
        #expect(dictionary["FRAMERATED_COMMAND"] == "python3")
        #expect(fields.count == dictionary.count, "no field name appears twice")
    }

    @Test("the six key events have distinct 128-bit message ids; other lines have none")
    func messageIDs() {
        let events = ["daemon-started", "daemon-stopping", "link-registered", "link-released", "refresh-rate-changed", "client-rejected"]
        let ids = events.compactMap { JournalMessageID.byEvent[$0] }
        #expect(ids.count == 6)
        #expect(Set(ids).count == 6)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) && $0 == $0.lowercased() })
        let plain = JournalField.fields(
            message: "client connected", level: .debug, metadata: ["pid": "1"], identifier: "framerated", file: "f", function: "g", line: 1
        )
        #expect(!plain.contains { $0.name == "MESSAGE_ID" })
    }
}

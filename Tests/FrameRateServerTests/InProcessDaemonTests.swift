import FrameRateProtocol
import Testing

/// The public face of the harness that the dispatcher fuzz target drives.
@Suite("InProcessDaemon")
struct InProcessDaemonTests {
    static func lines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("bytes in, replies and ticks out; closing gives everything back")
    func roundTrip() throws {
        let daemon = InProcessDaemon()
        let root = try daemon.connect(as: .root)
        let user = try daemon.connect(as: .user)
        let register = #"{"jsonrpc":"2.0","id":7,"method":"framerate.v1.DisplayLink/Register","params":{"range":{"minimum":60,"maximum":60},"label":"x"}}"#
        // Two lines in one read, the second split across two reads.
        let state = #"{"jsonrpc":"2.0","id":8,"method":"framerate.v1.Compositor/GetState"}"#
        try daemon.send(Array((register + "\n" + state.prefix(20)).utf8), on: root)
        try daemon.send(Array((state.dropFirst(20) + "\n").utf8), on: root)
        let replies = Self.lines(try daemon.output(of: root))
        #expect(replies.count == 2)
        #expect(replies.first?.hasPrefix(#"{"jsonrpc":"2.0","id":7,"result":{"link":1,"#) == true, "\(replies)")
        #expect(replies.last?.hasPrefix(#"{"jsonrpc":"2.0","id":8,"result":{"displays":"#) == true, "\(replies)")
        #expect(daemon.linkCount == 1 && daemon.linkCount(of: root) == 1 && daemon.linkCount(of: user) == 0)

        #expect(daemon.runNextVsync())
        let ticks = Self.lines(try daemon.output(of: root))
        #expect(ticks.count == 1 && ticks[0].contains(#""method":"framerate.v1.DisplayLink/Tick""#), "\(ticks)")
        #expect(try daemon.output(of: user).isEmpty)
        #expect(daemon.displays.allSatisfy { $0.supportedRates.contains($0.refreshRate) })

        daemon.close(root)
        #expect(!daemon.isOpen(root) && daemon.linkCount == 0 && daemon.linkCount(of: root) == 0)
        daemon.close(user)
        #expect(daemon.openConnectionCount == 0 && daemon.watchCount == 0 && daemon.accountedUserCount == 0)
    }

    @Test("a partial line times out after a wait: an error with id null, then the connection closes")
    func partialLineTimesOut() throws {
        let daemon = InProcessDaemon()
        let user = try daemon.connect(as: .user)
        try daemon.send(Array(#"{"jsonrpc":"2.0","#.utf8), on: user)
        #expect(try daemon.output(of: user).isEmpty)
        daemon.wait(seconds: 11)
        let lines = Self.lines(try daemon.output(of: user))
        #expect(lines.count == 1 && lines[0].hasPrefix(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#), "\(lines)")
        #expect(!daemon.isOpen(user))
        #expect(daemon.openConnectionCount == 0 && daemon.accountedUserCount == 0)
    }
}

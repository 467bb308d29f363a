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

    @Test("reset refuses while anything is open or held, then serves a new run from connection 0")
    func resetForTheNextRun() throws {
        let daemon = InProcessDaemon()
        let root = try daemon.connect(as: .root)
        let register = #"{"jsonrpc":"2.0","id":1,"method":"framerate.v1.DisplayLink/Register","params":{"range":{"minimum":60,"maximum":60}}}"#
        try daemon.send(Array((register + "\n").utf8), on: root)
        #expect(daemon.linkCount == 1)
        #expect(throws: InProcessDaemon.ResetRefused.self) { try daemon.reset() }
        do {
            try daemon.reset()
        } catch {
            #expect(error.description.hasPrefix("cannot reset: 1 open connections, 1 links, "), "\(error)")
            #expect(error.description.hasSuffix(", connections [0] not closed left"), "\(error)")
        }
        #expect(daemon.isOpen(root))  // a refused reset forgets nothing

        daemon.close(root)
        try daemon.reset()
        for round in 1...3 {
            let again = try daemon.connect(as: .user)
            #expect(again.index == 0)
            let id = round + 1
            let line = requestLine(V1Method.register.rawValue, #"{"range":{"minimum":60,"maximum":60}}"#, id: id)
            try daemon.send(Array((line + "\n").utf8), on: again)
            let replies = Self.lines(try daemon.output(of: again))
            #expect(replies.count == 1 && replies[0].hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"result":{"link":\#(id),"#), "\(replies)")
            daemon.close(again)
            try daemon.reset()
        }
        #expect(daemon.linkCount == 0 && daemon.openConnectionCount == 0 && daemon.accountedUserCount == 0)
    }
}

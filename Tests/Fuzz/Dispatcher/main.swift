// Fuzz target: the whole dispatcher over a real model, bytes in, replies out
// (FrameRateTesting's InProcessDaemon: the daemon's control plane and tick plane,
// stepped by hand, on embedded connections).
//
// The input is a script. Lines that are exactly one of these directives act; every other
// byte goes, as one read, to the current connection:
//   @vsync   run the tick plane at its next wake-up      @next   switch to the next connection
//   @close   hang up the current connection               @wait   let 11 s pass (timeouts)
//   @root / @user / @other / @admin   open a connection from that user and switch to it
//   @raw TEXT  send TEXT without a newline (a partial line; its own read)
// Two connections are open at the start: 0 from root, 1 from an unprivileged user.
//
// Invariants, checked as it goes:
// - everything the daemon writes is whole lines, each a valid JSON-RPC 2.0 message
//   (JSONRPCClientInbound: a response, a notification or a batch of responses);
// - every request owed a reply (as the JSON-RPC envelope classifies each complete line)
//   gets exactly one, with its id, in order, unless the connection is closed with an error;
//   a connection that was sent nothing gets no response;
// - output is bounded (1 MiB per owed reply, plus the notifications);
// - every tick's sequence number is above the last one of its link on its connection;
// - every display runs at one of its supported rates;
// - a closed connection holds no link; once every connection is closed, no link, watch,
//   connection or per-user count is left.
//
// One daemon serves every input (building one per input cost more than most inputs): each
// input ends with every connection closed and the checks above, then InProcessDaemon.reset(),
// which refuses unless nothing is left open or held. The clock, the displays' rates and the
// link numbering carry over from input to input, as in a daemon that stays up; a finding
// replayed alone (`Dispatcher crash-…`) runs on a fresh daemon.
import FrameRateModel
import FrameRateProtocol
import FrameRateTesting
import FuzzSupport

/// The most connections, vsyncs and waits one input may ask for (bounded cost per input).
let maximumConnections = 8
let maximumVsyncs = 32
let maximumWaits = 4
/// The daemon's line length limit (ServerConfiguration.Limits default); longer lines close the connection.
let lineLengthLimit = 1 << 16

/// What the oracle knows of one connection.
struct ConnectionState {
    let connection: InProcessDaemon.Connection
    /// Bytes after the last newline sent: the start of a line not yet complete.
    var partialLine: [UInt8] = []
    /// The last tick sequence seen per link.
    var lastSequence: [UInt64: UInt64] = [:]
}

/// The ids of the replies owed for one complete line (without its `\n`), as the daemon's
/// framing and envelope rules classify it; `nil` when the line is skipped (blank).
func owedIDs(line: ArraySlice<UInt8>, maximumBatchSize: Int) -> [String]? {
    var line = line
    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
    let inbound = JSONRPCInbound.parse(line: line, configuration: .init(maximumBatchSize: maximumBatchSize))
    func id(of message: JSONRPCInboundMessage) -> [String] {
        switch message {
        case .request(let id, _, _), .invalid(let id, _): [id.map(\.description) ?? "null"]
        case .notification: []
        }
    }
    switch inbound {
    case .single(let message): return id(of: message)
    case .batch(let messages): return messages.flatMap(id(of:))
    case .batchTooLarge: return ["null"]
    }
}

/// Checks everything `connection` was sent since the last look; returns the ids of the
/// responses in it, in order, and records its ticks.
func readOutput(_ daemon: InProcessDaemon, _ state: inout ConnectionState, bound: Int) throws -> (ids: [String], errorNullID: Bool) {
    let bytes = try daemon.output(of: state.connection)
    check(bytes.count <= bound, "output of \(bytes.count) bytes, above the bound \(bound)")
    guard !bytes.isEmpty else { return ([], false) }
    check(bytes.last == 0x0A, "the daemon wrote a partial line")
    var ids: [String] = []
    var errorNullID = false
    for line in bytes.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false) {
        let inbound: JSONRPCClientInbound
        do {
            inbound = try JSONRPCClientInbound.parse(line: line)
        } catch {
            fatalError("invariant violated: not a JSON-RPC 2.0 line (\(error)): \(String(decoding: line.prefix(500), as: UTF8.self))")
        }
        for message in inbound.messages {
            switch message {
            case .response(let id, let result):
                ids.append(id.map(\.description) ?? "null")
                if id == nil, case .failure = result { errorNullID = true }
            case .notification(let method, let params):
                if method == V1Method.tick.rawValue {
                    guard let tick = try? TickNotification(json: params) else {
                        fatalError("invariant violated: a malformed tick: \(String(decoding: line.prefix(500), as: UTF8.self))")
                    }
                    let link = tick.link.rawValue
                    if let last = state.lastSequence[link] {
                        check(tick.sequence > last, "link \(link): tick sequence \(tick.sequence) after \(last)")
                    }
                    state.lastSequence[link] = tick.sequence
                }
            }
        }
    }
    return (ids, errorNullID)
}

/// Sends `chunk` on `states[current]`, then checks every connection's output.
func send(_ chunk: [UInt8], daemon: InProcessDaemon, states: inout [ConnectionState], current: Int) throws {
    var owed: [String] = []
    var oversized = false
    let wasOpen = daemon.isOpen(states[current].connection)
    if wasOpen {
        var pending = states[current].partialLine + chunk
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = pending[..<newline]
            if line.count > lineLengthLimit + 1 { oversized = true }
            if let ids = owedIDs(line: line, maximumBatchSize: daemon.maximumBatchSize) { owed += ids }
            pending.removeSubrange(...newline)
        }
        if pending.count > lineLengthLimit { oversized = true }
        states[current].partialLine = pending
        try daemon.send(chunk, on: states[current].connection)
    }
    for index in states.indices {
        let bound = index == current ? (owed.count + 1) << 20 : 1 << 20
        let (ids, errorNullID) = try readOutput(daemon, &states[index], bound: bound)
        guard index == current, wasOpen else {
            check(ids.isEmpty, "connection \(index) was sent nothing and got responses \(ids)")
            continue
        }
        if daemon.isOpen(states[index].connection) {
            check(ids == owed, "replies \(ids.prefix(20)) for owed \(owed.prefix(20)) (\(ids.count) for \(owed.count))")
        } else {
            // Closed by the daemon (an oversized line): the replies before it, then one error with id null.
            check(oversized, "the daemon closed a connection that sent no oversized line")
            check(errorNullID, "the connection closed without an error")
            let answered = Array(ids.dropLast())
            check(Array(owed.prefix(answered.count)) == answered, "replies \(answered.prefix(20)) before closing, owed \(owed.prefix(20))")
        }
    }
}

func checkDisplays(_ daemon: InProcessDaemon) {
    for (rate, supported) in daemon.displays {
        check(supported.contains(rate), "a display runs at \(rate) Hz, not one of \(supported)")
    }
}

func run(_ input: [UInt8], on daemon: InProcessDaemon) throws {
    var states = [
        ConnectionState(connection: try daemon.connect(as: .root)),
        ConnectionState(connection: try daemon.connect(as: .user)),
    ]
    var current = 0
    var vsyncs = 0
    var waits = 0
    var chunk: [UInt8] = []

    func flush() throws {
        guard !chunk.isEmpty else { return }
        try send(chunk, daemon: daemon, states: &states, current: current)
        chunk.removeAll()
    }
    func open(_ user: InProcessDaemon.User) throws {
        guard states.count < maximumConnections else { return }
        states.append(ConnectionState(connection: try daemon.connect(as: user)))
        current = states.count - 1
        for index in states.indices { _ = try readOutput(daemon, &states[index], bound: 1 << 20) }
    }

    let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
    for (number, line) in lines.enumerated() {
        switch String(decoding: line, as: UTF8.self) {
        case "@vsync":
            try flush()
            guard vsyncs < maximumVsyncs else { continue }
            vsyncs += 1
            daemon.runNextVsync()
            checkDisplays(daemon)
            for index in states.indices {
                let (ids, _) = try readOutput(daemon, &states[index], bound: 1 << 20)
                check(ids.isEmpty, "a vsync produced responses \(ids)")
            }
        case "@next":
            try flush()
            current = (current + 1) % states.count
        case "@close":
            try flush()
            daemon.close(states[current].connection)
            check(daemon.linkCount(of: states[current].connection) == 0, "a closed connection still holds links")
            for index in states.indices { _ = try readOutput(daemon, &states[index], bound: 1 << 20) }
        case "@wait":
            try flush()
            guard waits < maximumWaits else { continue }
            waits += 1
            daemon.wait(seconds: 11)
            checkDisplays(daemon)
            for index in states.indices { _ = try readOutput(daemon, &states[index], bound: 1 << 20) }
        case "@root": try flush(); try open(.root)
        case "@user": try flush(); try open(.user)
        case "@other": try flush(); try open(.otherUser)
        case "@admin": try flush(); try open(.admin)
        case let directive where directive.hasPrefix("@raw "):
            try flush()
            chunk = Array(line.dropFirst(5))
            try flush()
        default:
            chunk += line
            if number < lines.count - 1 { chunk.append(0x0A) }
        }
    }
    try flush()
    for state in states { daemon.close(state.connection) }
    check(daemon.openConnectionCount == 0, "\(daemon.openConnectionCount) connections left open")
    check(daemon.linkCount == 0, "\(daemon.linkCount) links leaked")
    check(daemon.watchCount == 0, "\(daemon.watchCount) watches leaked")
    check(daemon.accountedUserCount == 0, "per-user accounting left for \(daemon.accountedUserCount) users")
    try daemon.reset()
}

/// The daemon every input runs on. `nonisolated(unsafe)`: libFuzzer calls the test function
/// on the thread that called `LLVMFuzzerRunDriver`, one input at a time (no `-jobs` or
/// `-workers` share a process), and nothing else touches it.
nonisolated(unsafe) let daemon = InProcessDaemon()

runFuzzer { data, size in
    do {
        try run(bytes(data, size), on: daemon)
    } catch {
        fatalError("invariant violated: the harness failed: \(error)")
    }
    return 0
}

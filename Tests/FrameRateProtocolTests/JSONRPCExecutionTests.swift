import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSONRPCInbound.Execution: a line executed over several calls")
struct JSONRPCExecutionTests {
    /// Executes `line` one message per call of `run`, counting the calls.
    static func stepByStep(_ line: String, calls: inout [String]) -> (reply: String?, runs: Int) {
        var execution = JSONRPCInbound.Execution(JSONRPCInbound.parse(line: line))
        var runs = 0
        while !execution.isFinished {
            let before = execution.executedCount
            execution.run(
                encodingHandler: { method, params in
                    calls.append(method)
                    return SpecHandler.handle(method, params).map { .value($0) }
                },
                pausingWhen: { true }
            )
            runs += 1
            // Each call makes progress, one message at a time when told to pause at once.
            #expect(execution.executedCount == before + 1)
        }
        return (execution.reply().map { String(buffer: $0) }, runs)
    }

    @Test("every specification example, paused after each message: the reply of one go", arguments: JSONRPCSpecExampleTests.examples)
    func sameReplyAsOneGo(_ example: JSONRPCSpecExampleTests.Example) {
        var calls: [String] = []
        let (reply, runs) = Self.stepByStep(example.request, calls: &calls)
        #expect(reply == example.reply)
        #expect(runs == JSONRPCInbound.Execution(JSONRPCInbound.parse(line: example.request)).messageCount)
    }

    @Test("messages run in order, each once, across the calls; notifications are not answered")
    func orderAcrossCalls() {
        var calls: [String] = []
        let line = #"[{"jsonrpc":"2.0","method":"notify_sum","params":[1]},{"jsonrpc":"2.0","method":"sum","params":[2],"id":1},{"jsonrpc":"2.0","method":"notify_hello"},{"jsonrpc":"2.0","method":"sum","params":[3],"id":2}]"#
        let (reply, runs) = Self.stepByStep(line, calls: &calls)
        #expect(runs == 4)
        #expect(calls == ["notify_sum", "sum", "notify_hello", "sum"])
        #expect(reply == #"[{"jsonrpc":"2.0","id":1,"result":2},{"jsonrpc":"2.0","id":2,"result":3}]"# + "\n")
    }

    @Test("the pause is asked after a message, never before the first nor after the last")
    func pauseQuestions() {
        let line = "[" + Array(repeating: #"{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}"#, count: 5).joined(separator: ",") + "]"
        var execution = JSONRPCInbound.Execution(JSONRPCInbound.parse(line: line))
        var asked = 0
        execution.run(encodingHandler: { _, _ in .success(.value(1)) }, pausingWhen: { asked += 1; return asked == 3 })
        #expect(execution.executedCount == 3 && !execution.isFinished)
        execution.run(encodingHandler: { _, _ in .success(.value(1)) }, pausingWhen: { asked += 1; return false })
        #expect(execution.isFinished && execution.executedCount == 5)
        // After messages 1, 2, 3 in the first call; after 4 in the second (not after 5, the last).
        #expect(asked == 4)
        #expect(execution.responses.count == 5)
    }

    @Test("an oversized batch is one answer and no execution")
    func oversized() {
        let line = "[" + Array(repeating: #"{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}"#, count: 3).joined(separator: ",") + "]"
        var execution = JSONRPCInbound.Execution(JSONRPCInbound.parse(line: line, configuration: .init(maximumBatchSize: 2)))
        var called = false
        execution.run(encodingHandler: { _, _ in called = true; return .success(.value(1)) }, pausingWhen: { true })
        #expect(!called && execution.isFinished)
        #expect(execution.reply().map { String(buffer: $0) }?.contains("RESOURCE_EXHAUSTED") == true)
    }
}

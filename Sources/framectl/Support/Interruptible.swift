/// How a long-running command's work ended: it completed, or a termination signal came first.
enum Interruptible<Value: Sendable>: Sendable {
    /// The work returned `value`.
    case completed(Value)
    /// SIGINT or SIGTERM arrived first; the work was cancelled.
    case interrupted(signal: Int32)

    /// Runs `work` until it returns or SIGINT/SIGTERM arrives, whichever is
    /// first, in a task group; the loser is cancelled and awaited. The signals
    /// are caught from before `work` starts until this returns.
    static func run(_ work: @escaping @Sendable () async -> Value) async -> Interruptible<Value> {
        let termination = TerminationSignal.listen()
        defer { termination.stop() }
        let signals = termination.signals
        return await withTaskGroup(of: Interruptible<Value>?.self) { group in
            group.addTask { .completed(await work()) }
            group.addTask { await TerminationSignal.next(from: signals).map { .interrupted(signal: $0) } }
            var outcome: Interruptible<Value>?
            while outcome == nil, let next = await group.next() {
                outcome = next
            }
            group.cancelAll()
            // The work task always produces a value, so the loop ends with one.
            return outcome ?? .interrupted(signal: 0)
        }
    }
}

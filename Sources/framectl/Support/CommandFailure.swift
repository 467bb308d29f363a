/// An expected failure of a command: printed as one `framectl: error: …` line
/// on standard error, then the process exits with ``exitCode``.
struct CommandFailure: Error, Equatable {
    /// What went wrong and what to do, as one sentence.
    let message: String
    /// The exit status: 1 for failures, 2 for usage errors.
    let exitCode: Int32

    /// A failure with exit status `exitCode` (default 1).
    init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }
}

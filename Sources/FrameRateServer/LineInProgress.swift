import FrameRateProtocol

/// A client's line being handled over one or more turns of the control loop: its
/// JSON-RPC messages' execution, and the count that enforces "one whole-document method a
/// line" across the turns it spans.
///
/// A batch of 128 `DisplayLink/Update`s, each re-arbitrating a display and announced to
/// 64 watches, took about 18 ms of loop time in one piece (`docs/performance.md`); a line
/// now yields to other connections between its messages once the connection's turn budget
/// is spent.
struct LineInProgress {
    var execution: JSONRPCInbound.Execution
    /// `GetState`, `Watch`, `Trace` and `rpc.discover` calls met so far (a line may hold one).
    var documents = 0

    init(_ inbound: JSONRPCInbound) {
        execution = JSONRPCInbound.Execution(inbound)
    }
}

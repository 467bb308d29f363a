import Foundation
import FrameRatePosix
import Synchronization

/// One tick line printed by `raw_client.py ticks` or `framectl register --json`.
struct PrintedTick: Decodable {
    var link: UInt64
    var sequence: UInt64
    var timestamp: Double
    var targetTimestamp: Double
    var duration: Double
    var refreshRate: Double
    var callbackRate: Double
    var skipped: UInt64
    /// Present (and true) only on a boosted link's ticks.
    var boosted: Bool?

    static func parse(_ lines: [String]) -> [PrintedTick] {
        lines.compactMap { line in
            guard line.contains("\"sequence\"") else { return nil }
            return try? JSONDecoder().decode(PrintedTick.self, from: Data(line.utf8))
        }
    }
}

/// Runs `body`, which blocks (socket reads up to a deadline of seconds), on an operating
/// system thread of its own named `name`, and suspends until it returns. Blocking on a
/// thread of the concurrency pool instead would hold one of its threads (two on this
/// machine) for as long, and with it the async work of every other test running then.
///
/// `body` reports a failure by throwing a plain error (``unwrapped(_:_:)``), which
/// `onOwnThread` rethrows to the test: `#expect` and `#require` on a thread the testing
/// library did not start attribute their issue to no test.
func onOwnThread<Value: Sendable>(
    named name: String, _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    let outcome = Mutex<Result<Value, any Error>?>(nil)
    let thread = try OSThread.spawn(name: name) {
        let result = Result { try body() }
        outcome.withLock { $0 = result }
    }
    await thread.join()
    // The body stored its result before it returned, and join() returned after it had.
    guard let result = outcome.withLock({ $0 }) else { preconditionFailure("\(name) returned without a result") }
    return try result.get()
}

/// A step of a test, run off the concurrency pool (``onOwnThread(named:_:)``), found
/// something other than what it needed.
struct BlockingStepFailure: Error, CustomStringConvertible {
    let description: String
}

/// `value`, or a ``BlockingStepFailure`` saying `what` was missing: `#require` for code
/// run by ``onOwnThread(named:_:)``.
func unwrapped<Value>(_ value: Value?, _ what: @autoclosure () -> String) throws -> Value {
    guard let value else { throw BlockingStepFailure(description: what()) }
    return value
}

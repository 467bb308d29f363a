import ArgumentParser
import Testing

@testable import framebench

/// `framebench load` and its hidden `worker` turn their seconds into nanoseconds with
/// `Int64(seconds * 1e9)`: each such option is range-checked while parsing, so a value
/// like `1e300` or `nan` is a usage error instead of a trap.
@Suite struct LoadOptionsTests {
    @Test("load refuses seconds that cannot become nanoseconds", arguments: [
        ["--grace", "1e300"], ["--grace", "-1"], ["--grace", "nan"], ["--probe-interval", "1e300"],
        ["--probe-interval", "1e-300"], ["--probe-interval", "-0.5"], ["--warmup", "inf"], ["--duration", "nan"],
    ])
    func loadRefuses(_ arguments: [String]) {
        #expect(throws: (any Error).self) { try Load.parse(arguments) }
    }

    @Test func loadAcceptsItsDefaultsAndTheBenchmarksValues() throws {
        _ = try Load.parse([])
        _ = try Load.parse(["--probe-interval", "0", "--grace", "0"])
        _ = try Load.parse(["--probe-interval", "0.2", "--grace", "60", "--warmup", "0.5", "--duration", "10"])
    }

    @Test func theWorkerRefusesAGraceThatCannotBecomeNanoseconds() throws {
        let required = ["--socket", "/tmp/x", "--connections", "1", "--links", "1", "--minimum", "120", "--maximum", "120", "--preferred", "120"]
        _ = try Worker.parse(required)
        for grace in ["1e300", "-1", "nan"] {
            #expect(throws: (any Error).self) { try Worker.parse(required + ["--grace", grace]) }
        }
    }
}

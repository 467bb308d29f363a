import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

/// What a fuzz target's `main.swift` calls: runs libFuzzer with the process's arguments and
/// `body` as the test function, then exits with libFuzzer's status.
///
/// `body` must be a non-capturing function (it is called through a C function pointer).
/// An invariant violation is reported with ``check(_:_:)``, which traps, so libFuzzer saves
/// the input as a crash.
public func runFuzzer(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, body))
}

/// The input as a byte array (libFuzzer passes `nil` for the empty input).
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Traps with `message` when `condition` is false: a fuzzing finding.
public func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

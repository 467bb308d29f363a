/// What a harness helper throws when the daemon did not answer as a test expects (the
/// test fails with this description and where the helper was called from).
package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
    package init(_ description: String, file: StaticString, line: UInt) {
        self.description = "\(file):\(line): \(description)"
    }
}

import FrameRateModel
import FrameRateProtocol
import Testing

/// Numbers from the wire that do not fit their Swift type are errors, never traps (issue 10 §1).
@Suite("Numeric conversions from the wire are checked")
struct NumericConversionTests {
    func linkJSON(pid: String, uid: String = "0") throws -> JSONValue {
        try JSONValue(
            parsing: #"{"link":1,"range":{"minimum":30,"maximum":60,"preferred":0},"paused":false,"callbackRate":60,"pid":\#(pid),"uid":\#(uid)}"#
        )
    }

    @Test func aPidOrUidBeyondItsTypeIsInvalidParams() throws {
        #expect(try LinkState(json: try linkJSON(pid: "2147483647", uid: "4294967295")).peer?.uid == UInt32.max)
        for (pid, uid, field) in [("2147483648", "0", "link.pid"), ("0", "4294967296", "link.uid"), ("1e300", "0", "link.pid")] {
            #expect {
                _ = try LinkState(json: try linkJSON(pid: pid, uid: uid))
            } throws: { error in
                let error = error as! RPCError
                return error.code == -32602 && error.data?["field"]?.stringValue == field
            }
        }
    }

    @Test func integerBoundsAreNamed() throws {
        let reader = try ParamReader(try JSONValue(parsing: #"{"pid":4294967296}"#), allowed: nil)
        #expect {
            _ = try reader.integer("pid", as: Int32.self)
        } throws: { error in
            (error as! RPCError).message == "pid must be an integer in 0...2147483647, got 4294967296"
        }
    }

    @Test func wireTimesSaturateInsteadOfOverflowing() {
        #expect(MonotonicClock.Instant(seconds: 1e300).nanoseconds == .max)
        #expect(MonotonicClock.Instant(seconds: -1e300).nanoseconds == .min)
        #expect(MonotonicClock.Instant(seconds: .nan).nanoseconds == 0)
        #expect(MonotonicClock.Instant(seconds: 1.5).nanoseconds == 1_500_000_000)
        #expect(WireTime.nanoseconds(of: .seconds(Int64.max)) == .max)
        #expect(WireTime.nanoseconds(of: .seconds(-Int64.max)) == .min)
        #expect(WireTime.nanoseconds(of: .milliseconds(16)) == 16_000_000)
    }
}

import FrameRateProtocol
import Testing

/// The wire of the virtual clock: `Compositor/Advance` params, GetState's `clock` and `now`.
@Suite struct VirtualClockMessageTests {
    @Test func advanceTakesFiniteSecondsFromZeroToADay() throws {
        #expect(try AdvanceRequest(params: parse(#"{"seconds":0}"#)).seconds == 0)
        #expect(try AdvanceRequest(params: parse(#"{"seconds":2.5}"#)).seconds == 2.5)
        #expect(try AdvanceRequest(params: parse(#"{"seconds":86400}"#)).seconds == 86_400)
        #expect(AdvanceRequest(seconds: 2.5).jsonValue == ["seconds": 2.5])
    }

    @Test(arguments: [#"{"seconds":-0.001}"#, #"{"seconds":86400.5}"#, #"{"seconds":1e400}"#, #"{"seconds":"1"}"#, #"{}"#, #"{"seconds":1,"extra":2}"#])
    func advanceRefusesEverythingElseNamingTheField(_ text: String) throws {
        let params = try parse(text)
        do throws(RPCError) {
            _ = try AdvanceRequest(params: params)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.grpcStatus == .invalidArgument)
        }
    }

    @Test func getStateCarriesTheClockAndNowAndOlderResultsParseWithoutThem() throws {
        var state = CompositorState(displays: [])
        state.clock = "virtual"
        state.now = 1002.533333333
        let json = state.jsonValue
        #expect(json["clock"] == .string("virtual"))
        let parsed = try CompositorState(json: json)
        #expect(parsed.clock == "virtual" && parsed.now == 1002.533333333)
        let older = try CompositorState(json: parse(#"{"displays":[]}"#))
        #expect(older.clock == nil && older.now == nil)
    }
}

import FrameRateProtocol
import Testing

@Suite("TickSocket messages")
struct TickSocketMessageTests {
    static let token = "0123456789abcdef0123456789abcdef"

    @Test("Attach takes exactly 32 lowercase hexadecimal digits, and round-trips")
    func attachToken() throws {
        let request = try AttachTickSocketRequest(params: ["token": .string(Self.token)])
        #expect(request.token == Self.token)
        #expect(try AttachTickSocketRequest(params: request.jsonValue) == request)
    }

    @Test(
        "Attach refuses a missing, mistyped, short, long, uppercase or non-hex token, naming the field",
        arguments: [
            nil, ["token": 5], ["token": .string("")], ["token": .string(String(token.dropLast()))], ["token": .string(token + "0")],
            ["token": .string(token.uppercased())], ["token": .string(String(token.dropLast()) + "g")],
            ["token": .string(String(repeating: "é", count: 16))], ["token": .string(String(repeating: "a", count: 10_000))],
            ["token": .string(token), "extra": true],
        ] as [JSONValue?]
    )
    func attachRefuses(_ params: JSONValue?) {
        do {
            _ = try AttachTickSocketRequest(params: params)
            Issue.record("accepted \(String(describing: params))")
        } catch {
            #expect(error.grpcStatus == .invalidArgument)
            #expect(error.message.contains("token") || error.message.contains("extra"), "\(error.message)")
        }
    }

    @Test("Open's result reads back what it wrote")
    func openResult() throws {
        let result = OpenTickSocketResult(token: Self.token)
        #expect(try OpenTickSocketResult(result: result.jsonValue) == result)
        #expect(throws: RPCError.self) { try OpenTickSocketResult(result: [:]) }
    }
}

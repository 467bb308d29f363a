import FrameRateProtocol
import NIOCore
import Testing

@Suite("JSON-RPC outbound encoding")
struct JSONRPCOutboundTests {
    @Test func lines() {
        #expect(
            JSONRPCOutboundMessage.request(id: 3, method: "hint.set", params: ["hz": 60.0]).line
                == #"{"jsonrpc":"2.0","id":3,"method":"hint.set","params":{"hz":60.0}}"# + "\n"
        )
        #expect(
            JSONRPCOutboundMessage.request(id: "a", method: "ping", params: nil).line
                == #"{"jsonrpc":"2.0","id":"a","method":"ping"}"# + "\n"
        )
        #expect(
            JSONRPCOutboundMessage.notification(method: "tick", params: [1, 2]).line
                == #"{"jsonrpc":"2.0","method":"tick","params":[1,2]}"# + "\n"
        )
        #expect(JSONRPCOutboundMessage.notification(method: "bye", params: nil).line == #"{"jsonrpc":"2.0","method":"bye"}"# + "\n")
        #expect(JSONRPCOutboundMessage.response(id: 1, result: .success(.null)).line == #"{"jsonrpc":"2.0","id":1,"result":null}"# + "\n")
        #expect(
            JSONRPCOutboundMessage.response(id: nil, result: .failure(.internalError)).line
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error","data":{"status":"INTERNAL"}}}"# + "\n"
        )
    }

    @Test func writeLineAndBatch() {
        var buffer = ByteBuffer()
        JSONRPCOutboundMessage.response(id: 1, result: .success(true)).writeLine(into: &buffer)
        #expect(JSONRPCOutboundMessage.writeBatchLine([], into: &buffer) == false)
        let wrote = JSONRPCOutboundMessage.writeBatchLine(
            [.response(id: 2, result: .success(1)), .response(id: "3", result: .failure(.parseError))],
            into: &buffer
        )
        #expect(wrote)
        #expect(
            String(buffer: buffer)
                == #"{"jsonrpc":"2.0","id":1,"result":true}"# + "\n"
                + #"[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0","id":"3","error":{"code":-32700,"message":"Parse error","data":{"status":"INVALID_ARGUMENT"}}}]"#
                + "\n"
        )
    }

    @Test func outputIsOneLineEvenWithNewlinesInStrings() {
        let line = JSONRPCOutboundMessage.notification(method: "log", params: ["a\nb\r\n"]).line
        #expect(line.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        #expect(line.utf8.last == UInt8(ascii: "\n"))
    }

    @Test func clientRequestsRoundTripThroughTheServerParser() {
        let request = JSONRPCOutboundMessage.request(id: .number(JSONNumber(text: "1.50")!), method: "m", params: ["k": "v"])
        var buffer = ByteBuffer()
        request.writeLine(into: &buffer)
        let line = buffer.getSlice(at: 0, length: buffer.readableBytes - 1)!
        #expect(
            JSONRPCInbound.parse(line: line)
                == .single(.request(id: .number(JSONNumber(text: "1.50")!), method: "m", params: ["k": "v"]))
        )
    }
}

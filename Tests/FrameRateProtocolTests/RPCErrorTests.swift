import FrameRateProtocol
import Testing

@Suite("RPCError and GRPCStatusCode")
struct RPCErrorTests {
    @Test func allSeventeenCodes() {
        #expect(GRPCStatusCode.allCases.count == 17)
        #expect(GRPCStatusCode.allCases.map(\.rawValue) == Array(0...16))
        let names = GRPCStatusCode.allCases.map(\.name)
        #expect(
            names == [
                "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
            ]
        )
        for code in GRPCStatusCode.allCases {
            #expect(GRPCStatusCode(name: code.name) == code)
            #expect(code.description == code.name)
        }
        #expect(GRPCStatusCode(name: "not_found") == nil)
        #expect(GRPCStatusCode(name: "") == nil)
    }

    @Test func standardErrors() {
        let cases: [(RPCError, Int, String, GRPCStatusCode)] = [
            (.parseError, -32700, "Parse error", .invalidArgument),
            (.invalidRequest, -32600, "Invalid Request", .invalidArgument),
            (.methodNotFound("x"), -32601, "Method not found", .unimplemented),
            (.invalidParams(field: "hz", "hz must be positive"), -32602, "hz must be positive", .invalidArgument),
            (.internalError, -32603, "Internal error", .internalError),
        ]
        for (error, code, message, status) in cases {
            #expect(error.code == code)
            #expect(error.message == message)
            #expect(error.data?["status"]?.stringValue == status.name)
            #expect(error.grpcStatus == status)
        }
        #expect(RPCError.invalidParams(field: "hz", "m").data == ["status": "INVALID_ARGUMENT", "field": "hz"])
        #expect(RPCError.invalidParams(field: nil, "m").data == ["status": "INVALID_ARGUMENT"])
        #expect(RPCError.parseError(detail: "d").data == ["status": "INVALID_ARGUMENT", "detail": "d"])
        #expect(RPCError.internalError(detail: "d").data == ["status": "INTERNAL", "detail": "d"])
        #expect(RPCError.lineTooLong(limit: 10).data == ["status": "INVALID_ARGUMENT", "detail": "line longer than 10 bytes"])
        #expect(RPCError.lineTooLong(limit: 10).code == -32600)
    }

    @Test(arguments: GRPCStatusCode.allCases.filter { $0 != .ok })
    func applicationErrors(_ status: GRPCStatusCode) {
        let error = RPCError.status(status, "why")
        #expect(error.code == status.rawValue)
        #expect(error.grpcStatus == status)
        #expect(
            error.jsonValue.jsonString
                == #"{"code":\#(status.rawValue),"message":"why","data":{"status":"\#(status.name)"}}"#
        )
        #expect(RPCError(error.jsonValue) == error)
    }

    @Test func grpcStatusWithoutData() {
        #expect(RPCError(code: 5, message: "x").grpcStatus == .notFound)
        #expect(RPCError(code: -32602, message: "x").grpcStatus == .invalidArgument)
        #expect(RPCError(code: -32000, message: "x").grpcStatus == .unknown)
        #expect(RPCError(code: 99, message: "x").grpcStatus == .unknown)
        #expect(RPCError(code: 5, message: "x", data: ["status": "ABORTED"]).grpcStatus == .aborted)
        #expect(RPCError(code: 5, message: "x", data: ["status": "bogus"]).grpcStatus == .notFound)
    }

    @Test func jsonForm() {
        #expect(RPCError(code: 1, message: "m").jsonValue.jsonString == #"{"code":1,"message":"m"}"#)
        #expect(RPCError(.string("x")) == nil)
        #expect(RPCError(["code": 1]) == nil)
        #expect(RPCError(["code": "1", "message": "m"]) == nil)
        #expect(RPCError(["code": 1, "message": "m", "data": [1]]) == RPCError(code: 1, message: "m", data: [1]))
        #expect(RPCError(code: 1, message: "m").description == "1: m")
    }

    @Test func rpcIDs() {
        #expect(RPCID(.number(JSONNumber(3))) == 3)
        #expect(RPCID(.string("x")) == "x")
        #expect(RPCID(.null) == nil)
        #expect(RPCID(.bool(true)) == nil)
        #expect(RPCID(.array([])) == nil)
        #expect(RPCID.string("a\"b").description == #""a\"b""#)
        #expect(RPCID.number(JSONNumber(text: "1.50")!).description == "1.50")
        #expect(RPCID.number(JSONNumber(text: "1.50")!) != RPCID.number(JSONNumber(text: "1.5")!))
    }
}

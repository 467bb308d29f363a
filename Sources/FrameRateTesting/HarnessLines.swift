package import FrameRateProtocol

/// `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
package func requestLine(_ method: String, _ params: String?, id: Int) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)""# + (params.map { #","params":\#($0)"# } ?? "") + "}"
}

/// `{"jsonrpc":"2.0","method":method,"params":params}`.
package func notificationLine(_ method: V1Method, _ params: String? = nil) -> String {
    #"{"jsonrpc":"2.0","method":"\#(method.rawValue)""# + (params.map { #","params":\#($0)"# } ?? "") + "}"
}

/// Parses one line the daemon sent.
package func message(_ line: String) throws -> JSONRPCClientMessage {
    guard case .single(let message) = try JSONRPCClientInbound.parse(line: line) else {
        throw TestFailure("not a single message: \(line)")
    }
    return message
}

/// The params of a notification line, checking its method.
package func notificationParams(_ line: String, _ method: V1Method, file: StaticString = #fileID, line number: UInt = #line) throws -> JSONValue {
    guard case .notification(let name, let params) = try message(line), name == method.rawValue, let params else {
        throw TestFailure("expected a \(method.rawValue) notification, got \(line)", file: file, line: number)
    }
    return params
}

/// `framerate.v1.TickSocket/Open` result: the token that names this connection to
/// `framerate.v1.TickSocket/Attach` on a second connection.
public struct OpenTickSocketResult: Hashable, Sendable {
    /// 32 lowercase hexadecimal digits (128 random bits), valid until the connection
    /// closes or a tick socket attaches with it.
    public var token: String

    /// Builds a result.
    public init(token: String) {
        self.token = token
    }

    /// Reads a result, naming the bad field.
    public init(result: JSONValue) throws(RPCError) {
        let reader = try ParamReader(result, allowed: nil)
        guard let token = try reader.string("token", maximumLength: AttachTickSocketRequest.tokenLength) else {
            throw .invalidParams(field: "token", "the Open result has no token")
        }
        self.token = token
    }

    /// The result object.
    public var jsonValue: JSONValue { ["token": .string(token)] }
}

/// `framerate.v1.TickSocket/Attach` params: makes the connection that sends it the tick
/// socket of the connection whose `Open` returned `token`.
public struct AttachTickSocketRequest: Hashable, Sendable {
    /// Characters in a token: 32 lowercase hexadecimal digits.
    public static let tokenLength = 32

    /// The token `Open` returned.
    public var token: String

    /// Builds a request.
    public init(token: String) {
        self.token = token
    }

    /// Parses params; `token` must be 32 lowercase hexadecimal digits.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["token"])
        guard let token = try reader.string("token", maximumLength: 64) else {
            throw .invalidParams(field: "token", "token is required: the string framerate.v1.TickSocket/Open returned on the other connection")
        }
        guard token.utf8.count == Self.tokenLength, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .invalidParams(
                field: "token", "token must be the 32 lowercase hexadecimal digits framerate.v1.TickSocket/Open returned, got \(token.utf8.count) characters"
            )
        }
        self.token = token
    }

    /// The params object.
    public var jsonValue: JSONValue { ["token": .string(token)] }
}

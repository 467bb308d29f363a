/// `framerate.v1.Compositor/Advance` params: move a virtual-clock daemon's time on.
public struct AdvanceRequest: Hashable, Sendable {
    /// How far to move virtual time, seconds (0 to ``maximumSeconds``).
    public var seconds: Double

    /// The longest advance one request may ask for: 86,400 s (a virtual day). Time moves
    /// only to instants where something is due, so its cost is bounded by those, not by
    /// the vsyncs in between.
    public static let maximumSeconds = 86_400.0

    /// Builds a request.
    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// Parses params, naming any bad field.
    public init(params: JSONValue?) throws(RPCError) {
        let reader = try ParamReader(params, allowed: ["seconds"])
        guard let seconds = try reader.number("seconds") else {
            throw .invalidParams(field: "seconds", "seconds is required: how far to move virtual time, in seconds")
        }
        guard seconds.isFinite, seconds >= 0, seconds <= Self.maximumSeconds else {
            throw .invalidParams(
                field: "seconds",
                "seconds must be a finite number from 0 to \(Int(Self.maximumSeconds)), got \(reader.quotedNumber("seconds") ?? "?")"
            )
        }
        self.seconds = seconds
    }

    /// The params object.
    public var jsonValue: JSONValue { ["seconds": JSONValue(seconds)] }
}

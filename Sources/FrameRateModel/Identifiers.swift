/// A display link's identifier: a positive integer unique for the daemon's lifetime.
public struct LinkID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The positive integer on the wire.
    public let rawValue: UInt64
    /// Wraps a wire value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders by value, i.e. by registration order.
    public static func < (lhs: LinkID, rhs: LinkID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `link N`.
    public var description: String { "link \(rawValue)" }
}

/// A display's identifier: a small integer, `0` for the first (default) display.
public struct DisplayID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The integer on the wire.
    public let rawValue: Int
    /// Wraps a wire value.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Orders by value.
    public static func < (lhs: DisplayID, rhs: DisplayID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `display N`.
    public var description: String { "display \(rawValue)" }
}

/// Who owns a link: in the daemon, one client connection. Links die with their owner.
public struct OwnerID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// An opaque number chosen by the caller (the server uses its connection number).
    public let rawValue: UInt64
    /// Wraps a value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// `owner N`.
    public var description: String { "owner \(rawValue)" }
}

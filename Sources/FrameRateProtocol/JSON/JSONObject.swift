/// A JSON object: an ordered list of members.
///
/// RFC 8259 allows duplicate member names, so they are kept: ``members`` preserves every
/// member in source order (and serialization writes them all back), while lookups by key
/// return the *last* member with that name, the behaviour of most JSON implementations.
/// Equality is exact and order-sensitive.
///
/// Lookups are linear scans; objects on this control plane have a handful of members.
public struct JSONObject: Sendable, Hashable {
    /// One `"key": value` member of an object.
    public struct Member: Sendable, Hashable {
        /// The member name.
        public var key: String
        /// The member value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// All members in order, duplicates included.
    public private(set) var members: [Member]

    /// Creates an empty object.
    public init() {
        self.members = []
    }

    /// Creates an object with exactly these members, in this order (duplicates are kept).
    public init(_ members: [Member]) {
        self.members = members
    }

    /// The member names in order (duplicates included).
    public var keys: [String] {
        self.members.map(\.key)
    }

    /// Whether the object has a member named `key`.
    public func contains(key: String) -> Bool {
        self.members.contains { $0.key == key }
    }

    /// The value of the last member named `key`, or `nil` if there is none.
    ///
    /// Setting a value replaces the last member named `key` in place and removes any earlier
    /// duplicates, or appends a new member if there is none; setting `nil` removes every member
    /// named `key`.
    public subscript(key: String) -> JSONValue? {
        get {
            self.members.last { $0.key == key }?.value
        }
        set {
            guard let newValue else {
                self.members.removeAll { $0.key == key }
                return
            }
            guard let last = self.members.lastIndex(where: { $0.key == key }) else {
                self.members.append(Member(key: key, value: newValue))
                return
            }
            self.members[last].value = newValue
            if self.members[..<last].contains(where: { $0.key == key }) {
                let kept = self.members.enumerated().filter { $0.offset >= last || $0.element.key != key }
                self.members = kept.map(\.element)
            }
        }
    }

    /// Appends a member without looking for an existing one (so it may create a duplicate).
    public mutating func append(key: String, value: JSONValue) {
        self.members.append(Member(key: key, value: value))
    }
}

extension JSONObject: RandomAccessCollection {
    /// The position of the first member.
    public var startIndex: Int { self.members.startIndex }

    /// The position after the last member.
    public var endIndex: Int { self.members.endIndex }

    /// The member at `position`.
    public subscript(position: Int) -> Member {
        self.members[position]
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object whose members are in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { Member(key: $0.0, value: $0.1) }
    }
}

public import FrameRateModel

/// One holder of a display's time at a rate, as `Compositor/GetState` shows it in
/// `residency[].heldBy`: a link (with the identity its holder had, through the same
/// encoding as a GetState link's) or a reason (`cap`, `idle`, `lowest`, `ended`).
public struct ResidencyHolderState: Hashable, Sendable {
    /// The link, or `nil` for a reason.
    public var link: LinkID?
    /// Why no link holds it: `cap`, `idle`, `lowest` (nothing held it up) or `ended`
    /// (ended links past the ledger's bound); `nil` for a link.
    public var reason: String?
    /// For a link: who held it.
    public var peer: PeerIdentity?
    /// For a link: its label.
    public var label: String?
    /// How long, seconds.
    public var seconds: Double

    /// Builds a holder from the model's share; `peer` names a link's owner, or is `nil`
    /// for one this viewer may not know (then its label is left out too).
    public init(_ share: ResidencyShare, peer: (OwnerID) -> PeerIdentity?) {
        if case .link(let link) = share.holder {
            self.link = link
            self.peer = share.owner.flatMap(peer)
            self.label = self.peer == nil ? nil : share.label
        }
        self.reason = share.holder.reason
        self.seconds = ResidencyRateState.seconds(share.time)
    }

    /// Parses a holder from the daemon.
    public init(json: JSONValue, path: String) throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        if let link = try reader.integer("link", minimum: 1) {
            self.link = LinkID(rawValue: UInt64(link))
            let pid = try reader.integer("pid", as: Int32.self)
            let command = try reader.string("command", maximumLength: 4096)
            self.peer = try reader.integer("uid", as: UInt32.self).map { PeerIdentity(pid: pid ?? 0, uid: $0, command: command) }
            self.label = try reader.string("label", maximumLength: 4096)
        }
        self.reason = try reader.string("reason")
        self.seconds = try reader.requiredNumber("seconds")
    }

    /// `{"link":3,"pid":…,"uid":…,"command":…,"label":…,"seconds":…}` or `{"link":null,"reason":"cap","seconds":…}`.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        if let link {
            object["link"] = JSONValue(link.rawValue)
            writeLinkIdentity(peer: peer, label: label, into: &object)
        } else {
            object["link"] = .null
            object["reason"] = JSONValue(reason)
        }
        object["seconds"] = JSONValue(seconds)
        return .object(object)
    }
}

/// A display's time at one rate since it started, and who held it there (GetState's `residency`).
public struct ResidencyRateState: Hashable, Sendable {
    /// The rate, Hz.
    public var rate: Double
    /// Time at that rate, seconds: the sum of ``heldBy``'s.
    public var seconds: Double
    /// Who held it, largest share first.
    public var heldBy: [ResidencyHolderState]

    /// Builds an entry from the model's; `peer` names each link's owner.
    public init(_ entry: ResidencyEntry, peer: (OwnerID) -> PeerIdentity?) {
        self.rate = entry.rate
        self.heldBy = entry.heldBy.map { ResidencyHolderState($0, peer: peer) }
        self.seconds = Self.seconds(entry.time)
    }

    /// Parses an entry from the daemon.
    public init(json: JSONValue, path: String) throws(RPCError) {
        let reader = try ParamReader(json, path: path, allowed: nil)
        self.rate = try reader.requiredNumber("rate")
        self.seconds = try reader.requiredNumber("seconds")
        var heldBy: [ResidencyHolderState] = []
        for holder in try reader.array("heldBy") ?? [] {
            heldBy.append(try ResidencyHolderState(json: holder, path: reader.fieldPath("heldBy")))
        }
        self.heldBy = heldBy
    }

    /// The entry object.
    public var jsonValue: JSONValue {
        ["rate": JSONValue(rate), "seconds": JSONValue(seconds), "heldBy": .array(heldBy.map(\.jsonValue))]
    }

    /// A duration as seconds on the wire, to the nanosecond.
    static func seconds(_ duration: Duration) -> Double { Double(WireTime.nanoseconds(of: duration)) / 1e9 }
}

/// How one simulated display is set up.
public struct DisplayConfiguration: Hashable, Sendable {
    /// Its id.
    public var id: DisplayID
    /// Its supported rates and entitlement rule.
    public var profile: DisplayProfile
    /// A ceiling on its refresh rate, in Hz, or `nil`.
    public var configuredMaximum: Double?
    /// The caps it starts with.
    public var caps: DisplayCaps

    /// Builds a display configuration.
    public init(id: DisplayID, profile: DisplayProfile = .promotionPhone, configuredMaximum: Double? = nil, caps: DisplayCaps = DisplayCaps()) {
        self.id = id
        self.profile = profile
        self.configuredMaximum = configuredMaximum
        self.caps = caps
    }
}

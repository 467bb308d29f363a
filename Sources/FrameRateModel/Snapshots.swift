/// A read-only view of one display link, for status output.
public struct LinkSnapshot: Hashable, Sendable {
    /// The link.
    public let link: LinkID
    /// Its owner.
    public let owner: OwnerID
    /// What the client asked for.
    public let configuration: DisplayLinkConfiguration
    /// The range after caps and entitlement clamping, as arbitrated.
    public let effectiveRange: FrameRateRange
    /// The callback rate at the rate in force, in Hz.
    public let callbackRate: Double
    /// When the link was registered: the instant passed to ``Compositor/register(owner:display:configuration:at:)``,
    /// as the time since ``Compositor/start`` (``Compositor/instant(sinceStart:)`` gives the instant).
    public let since: Duration
    /// How the entitlement or a cap limits the link, or `nil` when it may have what it asked for.
    public let limit: LinkLimit?
    /// Its presented frames and hitches; `nil` when it never sent `Present`.
    public let hitches: HitchSummary?
    /// When its boost in force ends, as the time since ``Compositor/start``
    /// (``Compositor/instant(sinceStart:)`` gives the instant); `nil` when not boosted.
    public var boostedUntil: Duration? = nil
    /// The frame it waits for before it ticks again, once an interval passed without a
    /// tick because of it; `nil` otherwise.
    public var awaitedFrame: AwaitedFrame? = nil
}

/// A read-only view of one display, for status output.
public struct DisplaySnapshot: Hashable, Sendable {
    /// The display.
    public let id: DisplayID
    /// Its profile.
    public let profile: DisplayProfile
    /// The refresh rate in force, in Hz: the vsync grid the links tick on.
    public let refreshRate: Double
    /// What comes before the decision's reason in ``reason``: when a pending change
    /// happens (`moving to 60 Hz after the decrease dwell: `), or empty.
    let reasonPrefix: String
    /// Why that rate: the decision's reason, prefixed with when a pending change happens.
    public var reason: String { reasonPrefix + decision.reason }
    /// The rate arbitration wants, in Hz (differs from `refreshRate` during a decrease dwell or idle wait).
    public let targetRate: Double
    /// The panel rate in force, in Hz: ``refreshRate`` unless a link's content velocity
    /// lowers the panel (then the links' callbacks stay on the grid at ``refreshRate``).
    public var panelRate: Double
    /// The panel arbitration with its pending change, while a content-velocity report is
    /// in force or the panel runs below the grid; `nil` when it is ``decision``.
    public var panelDecision: Decision?
    /// The caps in force.
    public let caps: DisplayCaps
    /// Every link on the display, in registration order.
    public let links: [LinkSnapshot]
    /// The latest arbitration, with the pending change if it is not in force yet.
    public let decision: Decision
    /// Time at each rate since the display started, and who held it there, highest rate first.
    public let residency: [ResidencyEntry]

    /// ``reason`` naming a link by its label only when `showingLabelOf` says so
    /// (``Decision/reason(showingLabelOf:)``).
    public func reason(showingLabelOf showingLabel: (LinkID) -> Bool) -> String {
        reasonPrefix + decision.reason(showingLabelOf: showingLabel)
    }
}

/// What a successful registration or update reports.
public struct LinkStatus: Hashable, Sendable {
    /// The link.
    public let link: LinkID
    /// The display it is on.
    public let display: DisplayID
    /// The refresh rate arbitration chose, in Hz: the display moves there at the
    /// next vsync (increase) or after the decrease dwell.
    public let refreshRate: Double
    /// The link's callback rate at that refresh rate, in Hz.
    public let callbackRate: Double
    /// The display's decision, with the pending change if it is not in force yet.
    public let decision: Decision
    /// How the entitlement or a cap limits this link, or `nil` when it may have what it asked for.
    public let limit: LinkLimit?

    /// What limits this link (the wire's `limitedBy`), or `nil`.
    public var limitedBy: LimitReason? { limit?.by }
    /// What this link asked for when it is limited (the wire's `wanted`), in Hz, or `nil`.
    public var wanted: Double? { limit?.wanted }
}

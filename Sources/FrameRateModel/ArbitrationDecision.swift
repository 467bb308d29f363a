/// Which step of the decision ladder in `docs/arbitration.md` chose a refresh rate.
///
/// The raw values are the names on the wire (`decision.rule`) and in the docs.
public enum ArbitrationRule: String, CaseIterable, Hashable, Sendable {
    /// Step 1: a cap holds the display: either it is below every supported rate, or
    /// the display runs at the highest rate the cap allows while a link the cap
    /// limits pulls higher.
    case cap
    /// Step 2: the lowest candidate that serves every voting link exactly.
    case exact
    /// Step 3: no rate serves every link exactly; the lowest-distance rate that
    /// serves every link preferring 30 Hz or 60 Hz exactly (their special priority).
    case priority
    /// Step 4: every voting link inside its range, smallest total relative distance
    /// to the preferred rates.
    case preferred
    /// Step 5: no rate keeps every link inside its range; the most links inside theirs.
    case mostServed = "most-served"
    /// Step 6: no voting link; the display idles down to its lowest rate.
    case idle
}

/// Why a link gets less than it asked for.
public enum LimitReason: String, CaseIterable, Hashable, Sendable {
    /// The profile needs the high-frame-rate entitlement above 60 Hz and the link lacks it.
    case entitlement
    /// A cap (Low Power Mode, Limit Frame Rate, thermal, the configured maximum).
    case cap
    /// An adaptive link (`adaptive: true`) whose frames kept missing their deadline was
    /// stepped down to a rate they fit (``OverrunMonitor``).
    case overrun
    /// The link reports content velocity (`contentVelocity`): the panel runs at its
    /// velocity table's rate while its callbacks keep their own (only in a panel decision).
    case velocity
}

/// One link that gets less than it asked for, and why.
///
/// "Asked for" is the link's preferred rate, or its maximum when it has none.
public struct LinkLimit: Hashable, Sendable {
    /// The link.
    public let link: LinkID
    /// What stands between what it asked for and what it may have.
    public let by: LimitReason
    /// What it asked for, in Hz: its preferred rate, or its maximum without one.
    public let wanted: Double
    /// The most it may have, in Hz: the entitlement-free limit or the cap.
    public let got: Double
    /// For a ``LimitReason/velocity`` limit: the reported velocity that decided, points/s.
    public var contentVelocity: Double? = nil

    /// Builds a limit.
    public init(link: LinkID, by: LimitReason, wanted: Double, got: Double) {
        self.link = link
        self.by = by
        self.wanted = wanted
        self.got = got
    }
}

/// A refresh-rate change already decided but not yet in force.
public struct PendingRateChange: Hashable, Sendable {
    /// The rate the display will run at, in Hz.
    public let rate: Double
    /// The vsync it takes effect at, as the time since the compositor's start
    /// (``Compositor/start``; ``Compositor/instant(sinceStart:)`` gives the instant).
    /// A driver that wakes late still applies a decrease at this vsync (the new grid starts
    /// here, as the ticks' timelines promised), then goes on to the vsync it woke for.
    public let at: Duration
}

/// One arbitration of one display, structured: the rate, the ladder step that chose
/// it, the links that hold it there, the cap in force, the links that get less than
/// they asked for, and a change already decided. ``reason`` says the same in one
/// sentence for people.
///
/// The lists are bounded (``listLimit`` entries, lowest link ids first), so a
/// decision's size does not grow with the number of links; ``deciderCount`` and
/// ``limitedCount`` say how many there are in all.
public struct Decision: Hashable, Sendable {
    /// The most entries ``deciders`` and ``limited`` list. (Computed, not a stored `static
    /// let`, so the per-link paths that read it compile to a constant, without the lazy
    /// global's initialization check.)
    public static var listLimit: Int { 16 }

    /// The rate this decision chose, in Hz: always one of the profile's supported rates.
    public let rate: Double
    /// The ladder step that chose it.
    public let rule: ArbitrationRule
    /// The links that hold the display at this rate, lowest id first; empty when a cap
    /// or idle decides, or when the rate is the lowest candidate (nothing holds it up).
    public let deciders: [LinkID]
    /// How many links hold the display at this rate (``deciders`` lists at most ``listLimit``).
    public let deciderCount: Int
    /// The cap in force on the display, if any, whether or not it limits a link.
    public let cap: RefreshRateCap?
    /// The voting links that get less than they asked for, lowest id first.
    public let limited: [LinkLimit]
    /// How many voting links are limited (``limited`` lists at most ``listLimit``).
    public let limitedCount: Int
    /// A change already decided and not yet in force, if any. Only a display's
    /// decision carries one (``Compositor/decision(of:)``); an arbitration alone never does.
    public let pending: PendingRateChange?
    /// One sentence for people, built from the fields above, naming links with their
    /// labels (``reason(showingLabelOf:)`` says it without some of them).
    public let reason: String
    /// The links ``reason`` names (at most two: the first decider and the first limited
    /// link), with the label and range it names them by.
    let named: [LinkVote]
    /// Whether a boost holds the rate: one of the listed ``deciders`` is boosted
    /// (`DisplayLink/Boost`) and votes its boost's range. Set by the display, which knows
    /// its boosts; an arbitration alone never sets it.
    public internal(set) var boosted: Bool = false

    /// The links ``reason`` names by label (at most two), whose holders decide who may see those labels.
    public var namedLinks: [LinkID] { named.map(\.link) }

    /// The same decision with `pending` set.
    func with(pending: PendingRateChange?) -> Decision {
        Decision(
            rate: rate, rule: rule, deciders: deciders, deciderCount: deciderCount, cap: cap,
            limited: limited, limitedCount: limitedCount, pending: pending, reason: reason, named: named, boosted: boosted
        )
    }

    /// ``reason`` as a viewer sees it who may see the label of a link only when
    /// `showingLabelOf` says so: `link 3 (80, 120, 120)` instead of `link 3 'scroll' (80, 120, 120)`.
    /// A label is its holder's words (an app's name, a window title), private to its holder.
    public func reason(showingLabelOf showingLabel: (LinkID) -> Bool) -> String {
        guard named.contains(where: { $0.label != nil && !showingLabel($0.link) }) else { return reason }
        return DecisionReason.sentence(
            rate: rate, rule: rule, deciders: deciders, deciderCount: deciderCount, cap: cap,
            limited: limited, limitedCount: limitedCount
        ) { link in
            guard let vote = named.first(where: { $0.link == link }) else { return "\(link)" }
            return vote.reasonName(showingLabel: showingLabel(link))
        }
    }

    /// The chosen refresh rate, in Hz (the name before ``rate``).
    public var refreshRate: Double { rate }

    /// The limit of `link`, if it is one of the listed ``limited`` links.
    public func limit(of link: LinkID) -> LinkLimit? {
        limited.first { $0.link == link }
    }
}

/// The outcome of one arbitration (the name before ``Decision``).
public typealias ArbitrationDecision = Decision

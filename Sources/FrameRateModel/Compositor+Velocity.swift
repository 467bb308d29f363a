extension Compositor {
    /// Records `owner`'s `contentVelocity` report for `link` made at `now` (points per
    /// second, the fastest-moving content in the frame; finite and `>= 0`, which the
    /// protocol checks at the boundary). Until it expires
    /// (``ContentVelocityTable/reportLifetime``) or a newer report replaces it, the link's
    /// panel vote is its display profile's velocity-table rate, while its callbacks keep
    /// the grid. A profile without a table accepts the report and ignores it.
    /// - Returns: whether the display re-arbitrated (the report moved the link to another
    ///   table rate): the driver's next wake-up may then be earlier.
    @discardableResult
    public mutating func reportContentVelocity(
        link: LinkID, owner: OwnerID, velocity: Double, at now: C.Instant
    ) throws(CompositorError) -> Bool {
        let index = try index(of: link, owner: owner)
        return displays[index].reportVelocity(link, velocity: velocity, at: now)
    }

    /// The panel rate in force on `display` (the default display when `nil`), in Hz:
    /// the refresh rate unless a link's content velocity lowers the panel.
    public func panelRate(of display: DisplayID? = nil) throws(CompositorError) -> Double {
        displays[try index(of: display)].panelRate
    }

    /// The panel arbitration of `display` (the default display when `nil`) with its
    /// pending change, or `nil` when no content-velocity report is in force and the panel
    /// runs at the grid rate (``decision(of:)`` is then the panel's too).
    public func panelDecision(of display: DisplayID? = nil) throws(CompositorError) -> Decision? {
        displays[try index(of: display)].panelDecision
    }

    /// The content-velocity report in force for `link`, if any.
    public func contentVelocity(of link: LinkID) -> ContentVelocityReport? {
        displayOfLink[link].flatMap { displays[$0].link(link)?.velocity }
    }
}

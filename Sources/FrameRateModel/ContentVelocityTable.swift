/// A display profile's content-velocity table: the panel rate a link reporting
/// `contentVelocity` (points per second) votes for (issue 13 §2; the field study's
/// 60/80/120 finding). See `docs/arbitration.md`, "Panel rate follows content velocity".
///
/// Bands are closed at the top: a velocity `v > 0` falls in the first band whose
/// ``Band/upTo`` is at least `v` (so on the phone 160 → 60 Hz, 160.5 → 80 Hz, 320 → 80 Hz,
/// 320.01 → 120 Hz); above every band, ``fastest`` applies. Velocity 0 is content at
/// rest and votes ``atRest``: the profile's lowest rate (the study: static content drops
/// the panel to its lowest rate), which the link's own range then raises to its minimum.
public struct ContentVelocityTable: Hashable, Sendable {
    /// One band: velocities up to ``upTo`` points/s (inclusive) vote ``rate`` Hz.
    public struct Band: Hashable, Sendable {
        /// The band's highest velocity, points per second, inclusive.
        public let upTo: Double
        /// The panel rate it votes, in Hz.
        public let rate: Double
    }

    /// How long a report counts, on the model's clock: a link's latest report expires
    /// 0.5 s after it was made, and the link then votes its ordinary range again.
    public static let reportLifetime: Duration = .milliseconds(500)

    /// The rate voted for content at rest (velocity 0), in Hz.
    public let atRest: Double
    /// The bands for velocities above 0, in increasing ``Band/upTo`` order.
    public let bands: [Band]
    /// The rate above every band, in Hz.
    public let fastest: Double

    /// The panel rate `velocity` (points/s, finite, `>= 0`) votes for, in Hz.
    public func rate(for velocity: Double) -> Double {
        guard velocity > 0 else { return atRest }
        for band in bands where velocity <= band.upTo { return band.rate }
        return fastest
    }

    /// The phone's table (the field study on iPhone 13 Pro): at rest 10 Hz,
    /// `(0, 160]` → 60 Hz, `(160, 320]` → 80 Hz, above 320 → 120 Hz.
    public static let phone = ContentVelocityTable(
        atRest: 10, bands: [Band(upTo: 160, rate: 60), Band(upTo: 320, rate: 80)], fastest: 120
    )

    /// The pad's table, with its own rates (it has no 80 Hz): at rest 24 Hz,
    /// `(0, 160]` → 60 Hz, above 160 → 120 Hz (the study's 80 Hz band moves up to the
    /// next rate the pad has, so medium-speed content never judders at 60).
    public static let pad = ContentVelocityTable(atRest: 24, bands: [Band(upTo: 160, rate: 60)], fastest: 120)
}

/// The device's thermal pressure, the `ProcessInfo.ThermalState` analog.
public enum ThermalState: String, CaseIterable, Hashable, Sendable {
    /// No thermal pressure: no cap.
    case nominal
    /// Slightly elevated: no cap.
    case fair
    /// High: caps the display at 60 Hz.
    case serious
    /// Critical: caps the display at 60 Hz, like `serious`: the display-performance
    /// guide maps `.serious, .critical` to 60 Hz (see `docs/arbitration.md`).
    case critical

    /// The refresh-rate cap this state imposes, in Hz, or `nil` for none.
    public var refreshRateCap: Double? {
        switch self {
        case .nominal, .fair: nil
        case .serious, .critical: 60
        }
    }
}

/// The system-wide limits on one display's refresh rate: power and thermal caps.
///
/// Low Power Mode and Limit Frame Rate (the accessibility setting) each cap at
/// 60 Hz; the thermal state caps as ``ThermalState/refreshRateCap`` says.
public struct DisplayCaps: Hashable, Sendable {
    /// Low Power Mode is on: caps at 60 Hz.
    public var lowPowerMode: Bool
    /// The accessibility "Limit Frame Rate" setting is on: caps at 60 Hz.
    public var limitFrameRate: Bool
    /// The current thermal state.
    public var thermalState: ThermalState

    /// Builds caps; the default is no cap at all.
    public init(lowPowerMode: Bool = false, limitFrameRate: Bool = false, thermalState: ThermalState = .nominal) {
        self.lowPowerMode = lowPowerMode
        self.limitFrameRate = limitFrameRate
        self.thermalState = thermalState
    }

    /// The rate the caps in force allow at most, in Hz, with what sets it;
    /// `configuredMaximum` is the daemon's configured ceiling (`--max-refresh-rate`).
    /// `nil` when nothing caps the display. When caps tie, the first in the order
    /// Low Power Mode, Limit Frame Rate, thermal, configured maximum is named.
    public func effectiveCap(configuredMaximum: Double?) -> RefreshRateCap? {
        var lowest: RefreshRateCap?
        func consider(_ rate: Double, _ kind: CapSource, _ source: String) {
            if lowest.map({ rate < $0.rate && !FrameRateMath.equal(rate, $0.rate) }) ?? true {
                lowest = RefreshRateCap(rate: rate, kind: kind, source: source)
            }
        }
        if lowPowerMode { consider(60, .lowPower, "Low Power Mode") }
        if limitFrameRate { consider(60, .limitFrameRate, "Limit Frame Rate") }
        if let rate = thermalState.refreshRateCap { consider(rate, .thermal, "thermal state \(thermalState.rawValue)") }
        if let configuredMaximum { consider(configuredMaximum, .maxRefreshRate, "the configured maximum") }
        return lowest
    }
}

/// What imposes a cap. The raw values are the names on the wire (`decision.cap.source`).
public enum CapSource: String, CaseIterable, Hashable, Sendable {
    /// Low Power Mode (60 Hz).
    case lowPower
    /// The accessibility setting Limit Frame Rate (60 Hz).
    case limitFrameRate
    /// The thermal state (`serious` and `critical`: 60 Hz).
    case thermal
    /// The daemon's configured ceiling, `--max-refresh-rate`.
    case maxRefreshRate
}

/// A ceiling on the refresh rate and what imposes it.
public struct RefreshRateCap: Hashable, Sendable {
    /// The highest allowed rate, in Hz.
    public let rate: Double
    /// What imposes it, by its wire name.
    public let kind: CapSource
    /// What imposes it, for reasons shown to people (e.g. `Low Power Mode`).
    public let source: String
}

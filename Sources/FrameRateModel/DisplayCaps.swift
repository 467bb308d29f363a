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

    /// The rate the caps in force allow at most, in Hz, with the name of the
    /// cap that sets it; `configuredMaximum` is the daemon's configured ceiling.
    /// `nil` when nothing caps the display.
    public func effectiveCap(configuredMaximum: Double?) -> RefreshRateCap? {
        var caps: [RefreshRateCap] = []
        if let configuredMaximum { caps.append(RefreshRateCap(rate: configuredMaximum, source: "the configured maximum")) }
        if lowPowerMode { caps.append(RefreshRateCap(rate: 60, source: "Low Power Mode")) }
        if limitFrameRate { caps.append(RefreshRateCap(rate: 60, source: "Limit Frame Rate")) }
        if let rate = thermalState.refreshRateCap {
            caps.append(RefreshRateCap(rate: rate, source: "thermal state \(thermalState.rawValue)"))
        }
        return caps.min { $0.rate < $1.rate }
    }
}

/// A ceiling on the refresh rate and what imposes it.
public struct RefreshRateCap: Hashable, Sendable {
    /// The highest allowed rate, in Hz.
    public let rate: Double
    /// What imposes it, for reasons shown to people (e.g. `Low Power Mode`).
    public let source: String
}

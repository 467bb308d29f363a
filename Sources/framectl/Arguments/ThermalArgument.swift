import ArgumentParser
import FrameRateModel

/// A `nominal|fair|serious|critical` argument.
enum ThermalArgument: String, CaseIterable, ExpressibleByArgument {
    /// No cap.
    case nominal
    /// No cap.
    case fair
    /// Caps at 60 Hz.
    case serious
    /// Caps at 30 Hz.
    case critical

    /// The model's thermal state.
    var state: ThermalState {
        switch self {
        case .nominal: .nominal
        case .fair: .fair
        case .serious: .serious
        case .critical: .critical
        }
    }
}

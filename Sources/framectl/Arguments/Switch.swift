import ArgumentParser

/// An `on|off` argument.
enum Switch: String, CaseIterable, ExpressibleByArgument {
    /// Turn the setting on.
    case on
    /// Turn the setting off.
    case off

    /// `true` for `on`.
    var isOn: Bool { self == .on }
}

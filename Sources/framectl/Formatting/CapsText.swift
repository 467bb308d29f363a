import FrameRateModel

/// How caps are shown to people.
enum CapsText {
    /// `low power on, limit frame rate off, thermal serious (at most 60 Hz: thermal state serious)`.
    static func describe(_ caps: DisplayCaps) -> String {
        var text = "low power \(onOff(caps.lowPowerMode)), limit frame rate \(onOff(caps.limitFrameRate)), "
            + "thermal \(caps.thermalState.rawValue)"
        if let cap = caps.effectiveCap(configuredMaximum: nil) {
            text += " (at most \(FrameRateMath.format(cap.rate)) Hz: \(cap.source))"
        } else {
            text += " (no cap)"
        }
        return text
    }

    /// `display 0: ` followed by ``describe(_:)``.
    static func line(display: DisplayID, caps: DisplayCaps) -> String {
        "display \(display.rawValue): " + describe(caps)
    }

    /// `on` or `off`.
    static func onOff(_ flag: Bool) -> String { flag ? "on" : "off" }
}

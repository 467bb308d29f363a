/// Fixed-point number formatting without Foundation: `format(7.91234, decimals: 3)` is `"7.912"`.
enum Fixed {
    /// `value` rounded to `decimals` digits after the point, always showing them.
    /// Non-finite or huge values fall back to Swift's own description.
    static func format(_ value: Double, decimals: Int) -> String {
        precondition((0...9).contains(decimals), "decimals must be 0...9")
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * Double(scale)).rounded()
        guard value.isFinite, scaled < 9e18 else { return value.description }
        let units = Int64(scaled)
        let sign = value < 0 && units != 0 ? "-" : ""
        let whole = String(units / scale)
        guard decimals > 0 else { return sign + whole }
        let fraction = String(units % scale)
        return sign + whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}

/// A link's frame committed by `Present` and not shown yet.
///
/// Times are durations since the display's origin, as in ``LinkPacer``.
struct PendingFrame: Sendable {
    /// A vsync within this (1 µs) before ``notBefore`` counts as at it: six periods of
    /// 1/120 s are a few attoseconds short of 50 ms on the grid, and a wire `at` is
    /// rounded to the nanosecond.
    static let slack = Duration.microseconds(1)

    /// The tick whose frame this is.
    let sequence: UInt64
    /// The tick's target, when the frame should be shown.
    let expected: Duration
    /// The frame shows at the first vsync at or after this time: the latest of when the
    /// request was read, its `at`, and the previous shown frame plus its `afterMinimumDuration`.
    let notBefore: Duration
}

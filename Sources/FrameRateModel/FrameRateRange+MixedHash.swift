extension FrameRateRange {
    /// A hash of the range's three rates whose high bits are well mixed, for the model's
    /// open-addressing tables (``CadenceTable``, the arbiter's groups), which take a slot
    /// from the top bits (Fibonacci hashing): rates' bit patterns end in long runs of zeros,
    /// which would leave the low bits of a product all zero. `+ 0` folds `-0.0` into `0.0`,
    /// as `==` does. Cheaper than `Hasher`'s SipHash, which a lookup per vote would pay.
    ///
    /// `seed` is the table's secret (``HashSeed``), the state the rates are mixed into: with
    /// a fixed seed, anyone could search offline for ranges that share a slot's top bits and
    /// register a thousand of them, and every lookup would then probe one long cluster, so
    /// each arbitration would cost O(ranges²) under the model lock that the tick plane takes.
    /// Ranges that collide under one seed are spread under another (`MixedHashTests`).
    func mixedHash(seed: HashSeed) -> UInt64 {
        var hash = (seed.value ^ (minimum + 0).bitPattern) &* 0x9E37_79B9_7F4A_7C15
        hash = (hash ^ (hash >> 29) ^ (maximum + 0).bitPattern) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 29) ^ (preferred + 0).bitPattern) &* 0x94D0_49BB_1331_11EB
        return hash
    }
}

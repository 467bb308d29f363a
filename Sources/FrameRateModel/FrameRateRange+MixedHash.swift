extension FrameRateRange {
    /// A hash of the range's three rates whose high bits are well mixed, for the model's
    /// open-addressing tables (``CadenceTable``, the arbiter's groups), which take a slot
    /// from the top bits (Fibonacci hashing): rates' bit patterns end in long runs of zeros,
    /// which would leave the low bits of a product all zero. `+ 0` folds `-0.0` into `0.0`,
    /// as `==` does. Cheaper than `Hasher`'s SipHash, which a lookup per vote would pay.
    var mixedHash: UInt64 {
        var hash = (minimum + 0).bitPattern &* 0x9E37_79B9_7F4A_7C15
        hash = (hash ^ (hash >> 29) ^ (maximum + 0).bitPattern) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 29) ^ (preferred + 0).bitPattern) &* 0x94D0_49BB_1331_11EB
        return hash
    }
}

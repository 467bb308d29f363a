/// The secret a model hash table mixes its keys with (``FrameRateRange/mixedHash(seed:)``),
/// drawn from the system's random source when an ``Arbiter`` is made, so that a client
/// cannot choose keys that collide. Which slot a key takes never shows in a result: the
/// tables keep their entries in insertion order, and only lookups go through the slots.
struct HashSeed: Sendable, Equatable {
    /// The 64 bits mixed in.
    let value: UInt64

    /// A fresh seed from the system's random source.
    static func random() -> HashSeed {
        HashSeed(value: UInt64.random(in: .min ... .max))
    }

    /// A given seed (tests pick theirs).
    init(value: UInt64) {
        self.value = value
    }
}

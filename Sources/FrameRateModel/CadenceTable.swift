/// How each distinct range fares at each rate of one profile (``CallbackCadence``'s
/// `isInsideRange`, `isExact` and `distance`), computed once per range: the scores
/// arbitration sums for every group of links and candidate rate.
///
/// Scoring was most of an arbitration's cost: a group's cadence at each of the profile's
/// rates (twelve on the phone), for every group, on every Register, Update and close,
/// although a change touches one group at most. ``Display`` keeps one table across its
/// arbitrations, so a re-arbitration computes only the cadences of ranges it has not
/// seen; ``Arbiter/decide(votes:caps:)``, one decision over distinct ranges, computes the
/// cadences as it reads them instead. Rows hold the values `CallbackCadence` computes,
/// unchanged, so the decisions are the same either way.
///
/// Rows are found by range in an open-addressing table (``FrameRateRange/mixedHash(seed:)``,
/// with the arbiter's secret ``HashSeed``), and
/// the table never grows past about twice the ranges in use: ``compact(keeping:)``.
struct CadenceTable: Sendable {
    /// One range at one rate: what arbitration reads of its ``CallbackCadence``.
    struct Cell: Sendable {
        var distance = 0.0
        var isInside = false
        var isExact = false

        init() {}

        @inline(__always)
        init(_ cadence: CallbackCadence) {
            distance = cadence.distance
            isInside = cadence.isInsideRange
            isExact = cadence.isExact
        }
    }

    /// The columns: the profile's supported rates, in Hz, as ``DisplayProfile`` orders them.
    let rates: [Double]
    /// The secret the rows' ranges are hashed with.
    let seed: HashSeed
    /// Each row's range.
    private(set) var ranges: [FrameRateRange] = []
    /// Row-major: row `r`, column `c` at `r * rates.count + c`.
    private var cells: [Cell] = []
    /// Row index plus one, or 0 for an empty slot; the count is a power of two (0 until the
    /// first row: an empty table allocates nothing).
    private var slots: [Int32] = []

    /// An empty table for a profile with `rates`, hashing ranges with `seed`.
    init(rates: [Double], seed: HashSeed) {
        self.rates = rates
        self.seed = seed
    }

    /// The number of rows.
    var count: Int { ranges.count }

    /// The row of `range`, computing it if the table has none.
    @inline(__always)
    mutating func row(of range: FrameRateRange) -> Int {
        if slots.isEmpty { slots = Array(repeating: 0, count: 16) }
        let mask = slots.count - 1
        var slot = Self.slot(range.mixedHash(seed: seed), count: slots.count)
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            if ranges[entry - 1] == range { return entry - 1 }
            slot = (slot + 1) & mask
        }
        let row = append(range)
        slots[slot] = Int32(ranges.count)
        if 2 * ranges.count > slots.count { rehash(capacity: slots.count * 2) }
        return row
    }

    /// Computes and appends `range`'s row (the caller indexes it).
    private mutating func append(_ range: FrameRateRange) -> Int {
        let start = cells.count
        // One append per row (it grows the storage geometrically), then the cells in place.
        cells.append(contentsOf: repeatElement(Cell(), count: rates.count))
        cells.withUnsafeMutableBufferPointer { cells in
            for (column, rate) in rates.enumerated() {
                cells[start + column] = Cell(CallbackCadence(range: range, refresh: rate))
            }
        }
        ranges.append(range)
        return ranges.count - 1
    }

    /// `row`'s range at `rates[column]`.
    @inline(__always)
    func cell(_ row: Int, _ column: Int) -> Cell { cells[row * rates.count + column] }

    /// Every cell, row-major, for loops that index them directly (``cell(_:_:)``'s order).
    var allCells: [Cell] { cells }

    /// Drops every row but those of `kept`, when the table holds more than twice as many
    /// rows as that (and more than 256): so it stays within about twice the ranges in use
    /// however many a client has come and gone with, and a compaction's cost, O(rows),
    /// is paid for by the rows added since the last one. Row numbers change.
    mutating func compact(keeping kept: some Collection<FrameRateRange>) {
        guard ranges.count > Swift.max(256, 2 * kept.count) else { return }
        var fresh = CadenceTable(rates: rates, seed: seed)
        for range in kept {
            guard let old = existingRow(of: range) else { continue }
            fresh.copyRow(old, from: self)
        }
        self = fresh
    }

    /// The row of `range` if the (indexed) table has one.
    private func existingRow(of range: FrameRateRange) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var slot = Self.slot(range.mixedHash(seed: seed), count: slots.count)
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            if ranges[entry - 1] == range { return entry - 1 }
            slot = (slot + 1) & mask
        }
    }

    /// Appends `row` of `table` (same rates), unless its range is here already.
    private mutating func copyRow(_ row: Int, from table: CadenceTable) {
        let range = table.ranges[row]
        guard existingRow(of: range) == nil else { return }
        if slots.isEmpty { slots = Array(repeating: 0, count: 16) }
        ranges.append(range)
        cells.append(contentsOf: table.cells[(row * rates.count)..<((row + 1) * rates.count)])
        if 2 * ranges.count > slots.count {
            rehash(capacity: slots.count * 2)
        } else {
            var slot = Self.slot(range.mixedHash(seed: seed), count: slots.count)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int32(ranges.count)
        }
    }

    private mutating func rehash(capacity: Int) {
        slots = Array(repeating: 0, count: capacity)
        let mask = capacity - 1
        for (index, range) in ranges.enumerated() {
            var slot = Self.slot(range.mixedHash(seed: seed), count: capacity)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }

    /// The slot of `hash` in a table of `count` (a power of two) slots: its top bits.
    private static func slot(_ hash: UInt64, count: Int) -> Int {
        Int(truncatingIfNeeded: hash >> UInt64(64 - count.trailingZeroBitCount))
    }
}

/// Left-aligned columns separated by two spaces, for terminal tables.
struct TextTable {
    /// The header row.
    let header: [String]
    /// The rows; each as many cells as the header.
    var rows: [[String]] = []

    /// The table's lines, each prefixed by `indent`, without trailing spaces.
    func lines(indent: String = "") -> [String] {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        return ([header] + rows).map { row in
            var line = indent
            for (column, cell) in row.enumerated() {
                let isLast = column == row.count - 1
                line += isLast ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}

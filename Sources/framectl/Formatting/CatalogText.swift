import FrameRateProtocol

/// What `framectl describe` prints: the daemon's ListServices result for people.
enum CatalogText {
    /// Each service, then each method with its kind, what it streams, and a table of its params.
    /// Reads the result generically, so fields a newer daemon adds are simply not shown.
    static func lines(for catalog: JSONValue) -> [String] {
        guard let services = catalog["services"]?.arrayValue, !services.isEmpty else { return ["no services"] }
        var lines: [String] = []
        for (index, service) in services.enumerated() {
            if index > 0 { lines.append("") }
            lines.append(service["name"]?.stringValue ?? "?")
            for method in service["methods"]?.arrayValue ?? [] {
                var heading = "  \(method["name"]?.stringValue ?? "?") (\(method["kind"]?.stringValue ?? "?")"
                if let streams = method["streams"]?.stringValue { heading += ", streams \(streams)" }
                lines.append(heading + ")")
                let params = method["params"]?.arrayValue ?? []
                guard !params.isEmpty else {
                    lines.append("    no params")
                    continue
                }
                var table = TextTable(header: ["PARAM", "TYPE", "REQUIRED"])
                for param in params {
                    table.rows.append([
                        param["name"]?.stringValue ?? "?", param["type"]?.stringValue ?? "?",
                        param["required"]?.boolValue == true ? "yes" : "no",
                    ])
                }
                lines.append(contentsOf: table.lines(indent: "    "))
            }
        }
        return lines
    }
}

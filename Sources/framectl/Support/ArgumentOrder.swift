/// Lets the global `--socket PATH` come before the subcommand name too
/// (`framectl --socket /tmp/s status`), by moving it after the name, where
/// each subcommand declares it.
enum ArgumentOrder {
    /// `arguments` (without the program name) with any leading `--socket PATH`
    /// or `--socket=PATH` moved to just after the subcommand name; unchanged
    /// when nothing precedes the name or no subcommand name follows.
    static func hoistingGlobalOptions(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            if arguments[index] == "--socket", index + 1 < arguments.count {
                leading += arguments[index...(index + 1)]
                index += 2
            } else if arguments[index].hasPrefix("--socket=") {
                leading.append(arguments[index])
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count, !arguments[index].hasPrefix("-"), arguments[index] != "help" else {
            return arguments
        }
        return [arguments[index]] + leading + arguments[(index + 1)...]
    }
}

/// The daemon's version as `grpc.health.v1.Health/Check`, `framerate.v1.Reflection/ListServices`
/// and `rpc.discover` report it: `"version":"0.9.0","commit":"1a2b3c4d5e6f"` (`commit` absent
/// when the build did not know it, e.g. one from a source tarball).
public struct DaemonVersion: Hashable, Sendable {
    /// The semantic version, e.g. `0.9.0`.
    public var semantic: String
    /// The git commit it was built from (`-dirty` when the tree had changes), or `nil`.
    public var commit: String?

    /// Builds a version.
    public init(semantic: String, commit: String? = nil) {
        self.semantic = semantic
        self.commit = commit
    }

    /// `version` and, when known, `commit`, to merge into a result object.
    public var members: JSONObject {
        var object: JSONObject = ["version": .string(semantic)]
        if let commit { object["commit"] = .string(commit) }
        return object
    }

    /// Reads `version` and `commit` back from a result; `nil` when `version` is missing.
    public init?(result: JSONValue) {
        guard let semantic = result["version"]?.stringValue else { return nil }
        self.init(semantic: semantic, commit: result["commit"]?.stringValue)
    }

    /// `0.9.0` or `0.9.0 (git 1a2b3c4d5e6f)`.
    public var description: String { commit.map { "\(semantic) (git \($0))" } ?? semantic }
}

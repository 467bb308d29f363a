internal import CFrameRateBuildInfo

/// The version of framerated, framectl and framebench: the one place it is kept.
///
/// `semantic` is edited here on a release; the Makefile reads it from this file for the
/// package's version (`make deb` names `framerated_<semantic>_amd64.deb`). `commit` comes
/// from the build: the Makefile passes `FRAMERATED_GIT_COMMIT` (`git rev-parse --short=12
/// HEAD`, with `-dirty` when the tree has uncommitted changes) to every `swift` it runs.
/// A build outside git (a source tarball) or a bare `swift build` has no commit and prints
/// the semantic version alone.
public enum FrameRateVersion {
    /// The semantic version (semver.org) of this release.
    public static let semantic = "0.10.0"

    /// The git commit the binaries were built from, or `nil` when the build did not know it.
    public static var commit: String? {
        let commit = String(cString: framerated_build_commit())
        return commit.isEmpty ? nil : commit
    }

    /// What `--version` prints and the daemon reports: `0.9.0` or `0.9.0 (git 1a2b3c4d5e6f)`.
    public static var description: String {
        guard let commit else { return semantic }
        return "\(semantic) (git \(commit))"
    }
}

/// Which release this build is (`storekeeper --version`, `/health`, the `storekeeper_build_info` metric). The version
/// follows `docs/versioning.md` and is the newest heading of `CHANGELOG.md` (a test checks the two agree); the commit is
/// `BuildCommit.value`: the commit for a binary `scripts/release.sh` built, `development` for any other build.
public enum Release {
    public static let version = "0.9.0"
    public static var commit: String { BuildCommit.value }

    /// `0.9.0 (commit 1a2b3c4)`.
    public static var description: String { "\(version) (commit \(commit))" }
}

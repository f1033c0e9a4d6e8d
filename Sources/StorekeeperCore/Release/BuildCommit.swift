/// The commit a release binary was built from: `scripts/release.sh` stamps it into a copy of the committed tree before
/// building. Any other build says `development`.
enum BuildCommit {
    static let value = "development"
}

/// The commit a release binary was built from. A build says `development` unless the release build stamps this file
/// with its commit before building (the release script of issue 62's second item, to come).
enum BuildCommit {
    static let value = "development"
}

/// Apple's public root certificates, shipped with the library so that verification needs no files at run time.
public enum AppleRootCertificates {
    /// Apple Root CA - G3 (P-384), the anchor of every StoreKit 2 JWS chain.
    /// SHA-256 `63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179`, from Apple PKI.
    public static let appleRootCAG3: [UInt8] = decodeEmbedded([
        "MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9v",
        "dCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UE",
        "CgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2",
        "WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmlj",
        "YXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqG",
        "SM49AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxE",
        "tX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517IDvYuVTZXpmkOlEKMaNC",
        "MEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P",
        "AQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3m",
        "eoyhpmvOwgPUnPWTxnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkL",
        "F1vLUagM6BgD56KyKA==",
    ])

    /// The default trust anchors for StoreKit 2 data.
    public static var storeKit: [[UInt8]] { [appleRootCAG3] }

    /// The embedded text is a constant checked by the tests (its SHA-256 is pinned), so decoding cannot fail at run
    /// time; an empty array would only make every verification fail closed.
    private static func decodeEmbedded(_ lines: [String]) -> [UInt8] {
        Base64.decode(Array(lines.joined().utf8), alphabet: .standard) ?? []
    }
}

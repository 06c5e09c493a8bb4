import CSodium

/// The libsodium library this build links against.
public enum Sodium {
    /// The linked library's version string, e.g. `1.0.18`.
    public static var version: String { String(cString: sodium_version_string()) }
}

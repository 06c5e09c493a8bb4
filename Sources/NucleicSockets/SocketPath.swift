import CShims
import Glibc

/// Where the daemon's Unix socket lives for a given `NUCLEIC_HOME`.
///
/// In order of preference (docs/LOCAL-SOCKET.md):
/// 1. `<home>/run/nucleic.sock`, when it fits in `sockaddr_un.sun_path` (107 bytes and a NUL);
/// 2. `$XDG_RUNTIME_DIR/nucleic-<hash>.sock`, if that folder exists, is ours and is writable by
///    nobody else;
/// 3. `/tmp/nucleic-<uid>/<hash>.sock`, creating `/tmp/nucleic-<uid>` with mode 0700, and refusing
///    it if it exists as a symlink, as something not ours, or writable by group or others.
///
/// `<hash>` is 16 hex digits of FNV-1a-64 over the home path (trailing slashes removed), so every
/// home gets its own socket and the CLI and the daemon compute the same path independently.
public enum SocketPath {
    /// The longest socket path, in UTF-8 bytes: `sun_path` holds 108 bytes with the NUL.
    public static let maxLength = Int(nucleic_sun_path_capacity()) - 1

    /// The socket path inside `home` (it may be too long to use; see `resolve`).
    public static func preferred(home: String) -> String {
        normalized(home) + "/run/nucleic.sock"
    }

    /// The socket path for `home`; see the type's documentation for the rules.
    ///
    /// - Parameters:
    ///   - home: the absolute `NUCLEIC_HOME`.
    ///   - runtimeDirectory: `$XDG_RUNTIME_DIR` (read from the environment by default; nil or empty
    ///     when unset).
    ///   - temporaryDirectory: the root of the last fallback (`/tmp`; tests pass their own).
    ///   - uid: whose folders these must be (the real uid by default).
    /// - Throws: `unsafeDirectory` when the `/tmp` fallback exists and is not safe, `pathTooLong`
    ///   when even the fallback does not fit, `systemCallFailed` when its folder cannot be created.
    ///   Only the `/tmp` fallback touches the file system; folders on the other paths are created
    ///   by the listener.
    public static func resolve(
        home: String,
        runtimeDirectory: String? = SocketPath.environment("XDG_RUNTIME_DIR"),
        temporaryDirectory: String = "/tmp",
        uid: UInt32 = SocketPath.realUID
    ) throws(SocketError) -> String {
        let preferred = preferred(home: home)
        if fits(preferred) { return preferred }

        let name = shortHash(of: home)
        if let runtimeDirectory, runtimeDirectory.hasPrefix("/") {
            let candidate = normalized(runtimeDirectory) + "/nucleic-\(name).sock"
            if fits(candidate),
               PrivateDirectory.problem(with: runtimeDirectory, uid: uid, followLinks: true) == nil {
                return candidate
            }
        }

        let folder = normalized(temporaryDirectory) + "/nucleic-\(uid)"
        let candidate = folder + "/\(name).sock"
        guard fits(candidate) else {
            throw SocketError(
                .pathTooLong,
                "no socket path fits for \(home): \(candidate) is longer than \(maxLength) bytes",
                path: candidate
            )
        }
        // /tmp is writable by everyone: never follow a symlink planted there.
        try PrivateDirectory.ensure(folder, uid: uid, followLinks: false)
        return candidate
    }

    /// This process's real user id.
    public static var realUID: UInt32 { getuid() }

    /// Whether `path` fits in `sun_path` with its NUL (and has no NUL of its own).
    public static func fits(_ path: String) -> Bool {
        !path.isEmpty && path.utf8.count <= maxLength && !path.utf8.contains(0)
    }

    /// 16 lowercase hex digits of FNV-1a-64 over the UTF-8 of `home` without trailing slashes.
    public static func shortHash(of home: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in normalized(home).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The value of environment variable `name`, or nil when unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// `path` without trailing slashes (but `/` stays `/`).
    static func normalized(_ path: String) -> String {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}

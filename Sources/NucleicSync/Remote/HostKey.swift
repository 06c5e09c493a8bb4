import Glibc
public import NucleicWire

/// The host's static X25519 key, in `$NUCLEIC_HOME/host.key`: the 32 private-key bytes, mode
/// 0600, created once (docs/PROTOCOL.md). Its public key is the `hk` every device pins.
///
/// ### Invariants
/// - The file is created with `O_EXCL` and mode 0600 and never rewritten: two daemons racing to
///   create it end with the same key.
/// - A file of another size, or readable by group or others, is refused (nothing is overwritten).
public enum HostKey {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The key pair in `path`, created when the file does not exist.
    public static func loadOrCreate(path: String) throws(Failure) -> NoiseKeyPair {
        for _ in 0..<3 {
            if let existing = try load(path) { return existing }
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw Failure(message: "cannot create the host key \(path): \(String(cString: strerror(errno)))")
            }
            let pair = NoiseKeyPair.generate()
            let written = pair.withPrivateKeyBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd)
            close(fd)
            guard written == 32, synced == 0 else {
                unlink(path)
                throw Failure(message: "cannot write the host key \(path)")
            }
            return pair
        }
        throw Failure(message: "the host key \(path) keeps appearing and disappearing")
    }

    static func load(_ path: String) throws(Failure) -> NoiseKeyPair? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure(message: "cannot read the host key \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(message: "cannot inspect the host key \(path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw Failure(message: "the host key \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                + "chmod 600 it, or remove it and pair every device again")
        }
        var bytes = [UInt8](repeating: 0, count: 33)
        let count = read(fd, &bytes, bytes.count)
        defer { for i in bytes.indices { bytes[i] = 0 } }
        guard count == 32 else {
            throw Failure(message: "the host key \(path) is \(max(count, 0)) bytes, not 32; remove it and pair every device again")
        }
        do { return try NoiseKeyPair(privateKey: bytes[0..<32]) } catch { throw Failure(message: "\(path): \(error)") }
    }
}
